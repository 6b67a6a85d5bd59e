// Package api is the partner API's contract: the OpenAPI 3.1 document of the gateway
// (openapi.yaml, the source, and openapi.json, generated from it by `make generate`), embedded so
// that the gateway serves the very document its tests validate against. The typed client
// generated from it is package client; the validator that keeps tests honest is package apitest.
package api

import _ "embed"

//go:embed openapi.yaml
var yamlDoc []byte

//go:embed openapi.json
var jsonDoc []byte

// YAML returns the document as written (api/openapi.yaml).
func YAML() []byte { return yamlDoc }

// JSON returns the document as JSON (api/openapi.json, generated from the YAML), what
// GET /api/v1/openapi.json serves.
func JSON() []byte { return jsonDoc }
