package clustertest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATS is a JetStream cluster of embedded servers.
type NATS struct {
	t       testing.TB
	servers []*server.Server
	opts    []*server.Options
}

// Start starts n JetStream servers (a cluster when n > 1) and waits until
// JetStream has a leader. They stop at the end of the test.
//
// The cluster ports are picked free ahead (each server's routes name the
// others'), so another test's server can take one before its server binds
// it: that server then never becomes ready (a CI race pass failed so,
// "nats server 1 not ready", with lazymemd's cluster tests running beside
// cluster's). Start then stops what it started and tries again on fresh
// ports, three times at most.
func Start(t testing.TB, n int) *NATS {
	t.Helper()
	for attempt := 1; ; attempt++ {
		c, err := tryStart(t, n)
		if err == nil {
			t.Cleanup(c.Shutdown)
			c.waitLeader()
			return c
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("clustertest: %v; trying again on fresh ports", err)
	}
}

// tryStart starts n servers on freshly picked ports; on failure it stops
// the ones it started.
func tryStart(t testing.TB, n int) (*NATS, error) {
	t.Helper()
	dir := t.TempDir()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freePort(t)
	}
	c := &NATS{t: t}
	for i := 0; i < n; i++ {
		o := &server.Options{
			ServerName: fmt.Sprintf("nats-%d", i), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("nats-%d", i)),
			JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 1 << 30,
			NoLog: true, NoSigs: true,
		}
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: "lazymem-test", Host: "127.0.0.1", Port: ports[i]}
			for j := 0; j < n; j++ {
				if j != i {
					o.Routes = append(o.Routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", ports[j])})
				}
			}
		}
		c.opts = append(c.opts, o)
		c.servers = append(c.servers, nil)
		if err := c.start(i); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	return c, nil
}

func (c *NATS) start(i int) error {
	s, err := server.NewServer(c.opts[i])
	if err != nil {
		return fmt.Errorf("nats server %d: %w", i, err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return fmt.Errorf("nats server %d not ready", i)
	}
	c.servers[i] = s
	return nil
}

// waitLeader waits until JetStream's meta group has a leader.
func (c *NATS) waitLeader() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range c.servers {
			if s != nil && s.JetStreamIsLeader() {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatal("no JetStream leader after 30s")
}

// URLs is the client URLs of the running servers, comma-separated.
func (c *NATS) URLs() string {
	var us []string
	for _, s := range c.servers {
		if s != nil {
			us = append(us, s.ClientURL())
		}
	}
	return strings.Join(us, ",")
}

// Kill stops server i at once (its clients reconnect to the others).
func (c *NATS) Kill(i int) {
	if s := c.servers[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.servers[i] = nil
	}
}

// StoreDir is server i's JetStream directory.
func (c *NATS) StoreDir(i int) string { return c.opts[i].StoreDir }

// Shutdown stops every server.
func (c *NATS) Shutdown() {
	for i := range c.servers {
		c.Kill(i)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
