// Package apidocs serves the API reference page at /docs: the gateway's OpenAPI document
// rendered in the browser by Redoc 2.5.4, vendored from the npm registry into assets/ with its
// licence (MIT) and its bundled dependencies' notices, embedded in the binary. Nothing is
// fetched from a CDN: the page loads the renderer and /api/v1/openapi.json from the gateway
// itself. assets/README.md says how the bundle was obtained and how to update it.
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

//go:embed assets/index.html assets/init.js assets/redoc.standalone.js assets/redoc.standalone.js.LICENSE.txt assets/redoc.LICENSE.txt
var assets embed.FS

// contentSecurityPolicy allows only the gateway's own scripts and the document. Redoc styles its
// components with inline <style> elements and runs its search in a worker made from a blob.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// types are the media types of the assets, by extension.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "application/javascript; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
}

// Page serves GET /docs.
func Page(w http.ResponseWriter, r *http.Request) { serve(w, "index.html") }

// Asset serves GET /docs/{asset}; ok is false when there is no such asset (the caller answers
// 404 in the API's error format).
func Asset(w http.ResponseWriter, name string) (ok bool) {
	if name == "index.html" || path.Base(name) != name {
		return false
	}
	if _, err := fs.Stat(assets, "assets/"+name); err != nil {
		return false
	}
	serve(w, name)
	return true
}

func serve(w http.ResponseWriter, name string) {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.Error(w, "missing asset", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", types[path.Ext(name)])
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
