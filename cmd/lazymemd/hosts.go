package main

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// hostSet is the Host headers the daemon answers. A DNS-rebinding attack
// points a name the attacker controls (evil.example) at 127.0.0.1: the
// victim's browser then sends the attacker's page's requests to the local
// daemon as same-origin ones, with no Origin header to refuse, but with
// "Host: evil.example". Answering only the names the daemon is reached by
// stops it.
type hostSet struct {
	any   bool
	names map[string]bool // "host\x00" (any port) or "host\x00port"
}

// defaultHosts are the loopback names, any port: the default --addr is
// reached by them and by nothing else.
var defaultHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// parseHosts reads --allowed-hosts entries: "*" (any host), a name or an
// address (any port: "localhost", "[::1]"), or one with a port
// ("mem.internal:7373").
func parseHosts(entries []string) (hostSet, error) {
	h := hostSet{names: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "*" {
			h.any = true
			continue
		}
		host, port, ok := splitHost(e)
		if !ok || host == "" {
			return h, fmt.Errorf("%w: --allowed-hosts %q: want *, a host name or address, or host:port", errFlag, e)
		}
		h.names[host+"\x00"+port] = true
	}
	return h, nil
}

// splitHost splits a Host header or an --allowed-hosts entry into its
// lowercase host (IPv6 without brackets) and port ("" when absent).
func splitHost(s string) (host, port string, ok bool) {
	s = strings.ToLower(s)
	if h, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return "", "", false
		}
		return h, p, true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return s[1 : len(s)-1], "", true
	}
	if strings.ContainsAny(s, ":[]/ ") {
		return "", "", false
	}
	return s, "", true
}

// allows reports whether a request's Host header names this daemon.
func (h hostSet) allows(hostHeader string) bool {
	if h.any {
		return true
	}
	host, port, ok := splitHost(hostHeader)
	if !ok || host == "" {
		return false
	}
	return h.names[host+"\x00"] || (port != "" && h.names[host+"\x00"+port])
}

// loopbackAddr reports whether a listen address accepts only local
// connections: then the default loopback names are all a client can use.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// probePath reports the paths any host, origin or client may call: they
// reveal nothing but that the process is up and ready, and supervisors
// probe by address.
func probePath(p string) bool {
	return p == "/v1/live" || p == "/v1/ready" || p == "/v1/health"
}

// publicPath reports the paths served without a credential: the probes
// and the inspector's page, which holds no data (its calls carry the
// user's token).
func publicPath(p string) bool {
	return probePath(p) || p == "/"
}

// hostChecked refuses requests whose Host header is not an allowed one.
func (s *server) hostChecked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !probePath(r.URL.Path) && !s.hosts.allows(r.Host) {
			s.fail(w, r, http.StatusForbidden, apiError{Code: "forbidden_host",
				Message: fmt.Sprintf("requests for the host %q are refused (lazymemd --allowed-hosts lists the names this daemon is reached by)", r.Host)})
			return
		}
		h.ServeHTTP(w, r)
	})
}
