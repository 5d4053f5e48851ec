//go:build linux

package index

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestParseTHPMode(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never\n": "always",
		"always madvise [never]\n": "never",
		"always madvise never\n":   "",
		"[madvise":                 "",
		"":                         "",
	} {
		if got := parseTHPMode([]byte(in)); got != want {
			t.Errorf("parseTHPMode(%q) = %q, want %q", in, got, want)
		}
	}
}

// thpEligible reads /proc/self/smaps's THPeligible of the mapping that
// holds address a.
func thpEligible(t *testing.T, a uintptr) (bool, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		if len(fs) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fs[0], "-"); ok && !strings.HasSuffix(fs[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(a) >= l && uint64(a) < h
			continue
		}
		if in && fs[0] == "THPeligible:" && len(fs) > 1 {
			return fs[1] == "1", true
		}
	}
	return false, false
}

func TestAdviseHuge(t *testing.T) {
	mode := thpMode()
	if mode != "madvise" && mode != "always" {
		t.Skipf("transparent huge pages are %q on this host", mode)
	}
	b := make([]byte, 8<<20)
	adviseHuge(b)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	mid := (p + hugePage) &^ (hugePage - 1) // inside the advised range
	ok, found := thpEligible(t, mid)
	if !found {
		t.Fatalf("no mapping holds %#x", mid)
	}
	if !ok {
		t.Errorf("the advised memory at %#x is not THP-eligible (mode %s)", mid, mode)
	}
	runtime.KeepAlive(b)
}

func TestReserveHeap(t *testing.T) {
	if mode := thpMode(); mode != "madvise" {
		reserveHeap(4 << 20) // a no-op
		t.Skipf("transparent huge pages are %q on this host: reserveHeap does nothing", mode)
	}
	n0 := gcCount()
	reserveHeap(4 << 20)
	if gcCount() == n0 {
		t.Error("reserveHeap did not collect its reservation")
	}
}

func gcCount() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}
