package eval

import (
	"errors"
	"reflect"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

func TestParseModes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []engine.Mode
	}{
		{"", DefaultModes},
		{"all", DefaultModes},
		{"lazy", []engine.Mode{engine.ModeLazy}},
		{" dense, sparse ", []engine.Mode{engine.ModeDense, engine.ModeSparse}},
	} {
		got, err := ParseModes(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseModes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"eager", "lazy,", "LAZY"} {
		if _, err := ParseModes(in); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseModes(%q): err %v, want ErrConfig", in, err)
		}
	}
}

func TestParseKs(t *testing.T) {
	got, err := ParseKs(" 1, 10 ,3")
	if err != nil || !reflect.DeepEqual(got, []int{1, 10, 3}) {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := ParseKs(""); err != nil || !reflect.DeepEqual(got, DefaultKs) {
		t.Errorf("default: %v, %v", got, err)
	}
	for _, in := range []string{"0", "x", "1,,2", "1001", "-1"} {
		if _, err := ParseKs(in); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseKs(%q): err %v, want ErrConfig", in, err)
		}
	}
}
