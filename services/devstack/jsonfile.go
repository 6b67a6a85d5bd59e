package devstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// readJSONFile decodes the JSON file at path. The stack writes its files on the first run, so a
// missing one is not an error but the zero T; what names the file in the errors.
func readJSONFile[T any](path, what string) (T, error) {
	var v T
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("reading %s: %w", what, err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("reading %s: %s: %w", what, path, err)
	}
	return v, nil
}

// writeJSONFile replaces path with v as indented JSON, readable by the owner only: the stack's
// files hold secrets.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writePrivateFile(path, append(data, '\n'))
}
