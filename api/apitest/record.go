package apitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Record writes the first response seen of each operation and status into the directory
// APITEST_RECORD_DIR names, when set: real answers, for the document's examples.
func (v *Validator) Record(x Exchange) {
	dir := os.Getenv("APITEST_RECORD_DIR")
	if dir == "" || len(x.ResponseBody) == 0 || !strings.HasPrefix(x.Header.Get("Content-Type"), "application/json") {
		return
	}
	route, _, err := v.router.FindRoute(validationRequest(x))
	if err != nil || route.Operation == nil {
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.json", route.Operation.OperationID, x.Status))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return // already recorded, or no such directory
	}
	defer f.Close()
	_, _ = f.Write(x.ResponseBody)
}
