// Package docs carries the documents the programs serve: the OpenAPI
// description of the daemon's HTTP API (openapi.yaml), which lazymemd
// serves as JSON at GET /v1/openapi.json and its tests hold every reply
// to.
package docs

import _ "embed"

// OpenAPIYAML is openapi.yaml: the lazymemd HTTP API, OpenAPI 3.1.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
