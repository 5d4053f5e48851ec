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
func Start(t testing.TB, n int) *NATS {
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
		c.start(i)
	}
	t.Cleanup(c.Shutdown)
	c.waitLeader()
	return c
}

func (c *NATS) start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	if err != nil {
		c.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(60 * time.Second) {
		c.t.Fatalf("nats server %d not ready", i)
	}
	c.servers[i] = s
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
