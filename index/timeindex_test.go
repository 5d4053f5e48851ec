package index

import (
	"slices"
	"testing"
)

// TestTimeIndexOutOfOrder: late records (time below an earlier id's time)
// are found exactly, and gaps in ids are harmless.
func TestTimeIndexOutOfOrder(t *testing.T) {
	var ti timeIndex
	ti.init()
	// id: time
	data := []struct {
		id uint32
		ts int64
	}{{10, 100}, {11, 200}, {12, 50}, {13, 300}, {15, 250}, {16, 400}, {17, 400}, {18, 90}, {19, 500}}
	for _, d := range data {
		ti.add(d.id, d.ts)
	}
	for _, tc := range []struct {
		since, until int64
		want         []uint32
	}{
		{0, 0, []uint32{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}}, // 14 is a gap: the caller ANDs with live
		{100, 300, []uint32{10, 11, 15}},
		{50, 51, []uint32{12}},
		{0, 100, []uint32{12, 18}},
		{250, 401, []uint32{13, 14, 15, 16, 17}}, // gap 14 included: Filter ANDs with live
		{400, 0, []uint32{16, 17, 19}},
		{501, 0, nil},
		{60, 95, []uint32{18}},
	} {
		got := ti.rangeBitmap(tc.since, tc.until).ToArray()
		if tc.since == 0 && tc.until == 0 {
			continue // unbounded is never asked of the time index (Filter skips it)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[%d, %d): got %v want %v", tc.since, tc.until, got, tc.want)
		}
	}
	if len(ti.lateIDs) != 3 {
		t.Errorf("late ids %v, want 12, 15, 18", ti.lateIDs)
	}
}
