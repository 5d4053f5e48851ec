package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lazymemd-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestTLS: with --tls-cert and --tls-key the daemon serves HTTPS only; a
// client trusting the certificate gets answers, a plain HTTP request
// does not reach the API.
func TestTLS(t *testing.T) {
	certFile, keyFile, cert := selfSigned(t)
	cfg := testConfig(t.TempDir())
	cfg.tlsCert, cfg.tlsKey = certFile, keyFile
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, io.Discard) }()
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + ln.Addr().String()
	waitFor(t, "https ready", func() bool {
		resp, err := client.Get(url + "/v1/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	resp, err := client.Post(url+"/v1/records", "application/json", strings.NewReader(`{"agent":"a","text":"over tls"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("append over https: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Get("http://" + ln.Addr().String() + "/v1/stats"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatalf("plain http answered 200: %s", b)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A pair that does not load fails the start, naming the flags.
	cfg.tlsKey = certFile
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	if err := serve(context.Background(), cfg, ln, io.Discard); err == nil || !strings.Contains(err.Error(), "--tls-cert/--tls-key") {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := parseArgs([]string{"--db", "d", "--tls-cert", "c"}, io.Discard); err == nil {
		t.Fatal("--tls-cert without --tls-key accepted")
	}
}
