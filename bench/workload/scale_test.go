package workload

import (
	"errors"
	"testing"
)

func TestParseScale(t *testing.T) {
	for in, want := range map[string]int{
		"10k": 10_000, "100K": 100_000, "1m": 1_000_000, "2.5M": 2_500_000,
		"250000": 250_000, "1_000_000": 1_000_000, " 0 ": 0, "1.5k": 1500,
	} {
		got, err := ParseScale(in)
		if err != nil || got != want {
			t.Errorf("ParseScale(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "-1k", "1.00001k", "1e6", "0x10", "NaN", "Inf", "1g", "10kk", "9999999999999m"} {
		if _, err := ParseScale(in); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseScale(%q): err %v, want ErrInvalidConfig", in, err)
		}
	}
}

func FuzzParseScale(f *testing.F) {
	for _, s := range []string{"10k", "1m", "250000", "2.5M", "", "-1", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseScale(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			return
		}
		if n < 0 || n > 1<<40 {
			t.Fatalf("ParseScale(%q) = %d out of range", s, n)
		}
	})
}
