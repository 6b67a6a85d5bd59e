// Command openapi checks the partner API's document and writes its JSON form:
//
//	go run ./cmd/openapi lint            validate api/openapi.yaml (exit 1 on a finding)
//	go run ./cmd/openapi json [OUT]      write the JSON form (default api/openapi.json)
//
// Run from the api module's directory; scripts/generate.sh and scripts/check-generated.sh do.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: openapi lint | openapi json [OUT]")
	}
	doc, err := os.ReadFile("openapi.yaml")
	if err != nil {
		return err
	}
	switch args[0] {
	case "lint":
		findings, err := Lint(doc)
		if err != nil {
			return err
		}
		for _, f := range findings {
			fmt.Fprintln(os.Stderr, f)
		}
		if len(findings) > 0 {
			return fmt.Errorf("%d finding(s) in openapi.yaml", len(findings))
		}
		fmt.Println("ok: openapi.yaml is a valid OpenAPI 3.1 document and follows the house rules")
		return nil
	case "json":
		out := "openapi.json"
		if len(args) > 1 {
			out = args[1]
		}
		b, err := ToJSON(doc)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
}
