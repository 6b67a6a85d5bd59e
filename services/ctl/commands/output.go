package commands

import (
	"encoding/json"
	"io"
)

// printJSON writes v as indented JSON, for --json.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// secretWarning goes to stderr whenever keys are printed, so that it shows even when stdout is
// captured by a script.
const secretWarning = "WARNING: these API keys are shown only once and cannot be retrieved again. " +
	"Store them in a secret manager now.\n"
