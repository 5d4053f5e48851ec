package main

import (
	_ "embed"
	"net/http"
)

// The inspector: GET / serves one self-contained page (no external
// assets) that calls the API from the browser with the user's token:
// choose an agent within the key, search and see every stage of the
// recall (records filtered, candidates by source, embedded, cache hits,
// time per stage) and why each memory ranked, and browse a session as a
// timeline. The page holds no data: it is served without a credential,
// and every call it makes needs one.
//
//go:embed inspector/index.html
var inspectorHTML []byte

func (s *server) inspector(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	// Only this page's own inline script and style, and calls to this
	// origin; no frames (clickjacking).
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	w.Write(inspectorHTML)
}
