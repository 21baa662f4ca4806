package alloc

import (
	"fmt"
	"strings"
)

// StatType indexes a StatArray, as PyTorch's StatType.
type StatType int

// The pools a statistic is broken down by.
const (
	StatAll       StatType = iota // "all": both pools together
	StatSmallPool                 // "small_pool": blocks of at most 1 MiB
	StatLargePool                 // "large_pool": larger blocks
)

var statTypeNames = [...]string{"all", "small_pool", "large_pool"}

// String is the name torch.cuda.memory_stats uses for the pool.
func (t StatType) String() string { return statTypeNames[t] }

// Stat is one counter: its current value, its peak since the last
// ResetPeakStats, and its total increase and decrease.
type Stat struct {
	Current, Peak, Allocated, Freed int64
}

func (s *Stat) add(amount int64) {
	s.Current += amount
	s.Peak = max(s.Peak, s.Current)
	if amount > 0 {
		s.Allocated += amount
	} else {
		s.Freed -= amount
	}
}

// StatArray is a counter broken down by pool, indexed by StatType.
type StatArray [3]Stat

// Stats are the allocator's counters, named and defined as PyTorch's
// DeviceStats (torch.cuda.memory_stats).
type Stats struct {
	Allocation         StatArray // blocks handed out by Malloc and not freed
	Segment            StatArray // segments reserved from the device
	Active             StatArray // blocks allocated or freed but waiting on stream events
	InactiveSplit      StatArray // free blocks inside partly used segments
	AllocatedBytes     StatArray // bytes of allocated blocks
	ReservedBytes      StatArray // bytes of all segments
	ActiveBytes        StatArray // bytes of active blocks
	InactiveSplitBytes StatArray // bytes of inactive split blocks: cached but not releasable
	RequestedBytes     StatArray // bytes asked of Malloc by the allocated blocks

	// Oversize counters exist for parity with PyTorch; without a
	// max_split_size setting they stay zero.
	OversizeAllocations Stat
	OversizeSegments    Stat

	NumAllocRetries int64 // device allocations that failed and led to a cache flush and retry
	NumOOMs         int64 // out-of-memory errors returned
	MaxSplitSize    int64 // -1: blocks of any size may be split
}

func (s *Stats) arrays() []*StatArray {
	return []*StatArray{&s.Allocation, &s.Segment, &s.Active, &s.InactiveSplit,
		&s.AllocatedBytes, &s.ReservedBytes, &s.ActiveBytes, &s.InactiveSplitBytes, &s.RequestedBytes}
}

func (s *Stats) forEach(fn func(*Stat)) {
	for _, arr := range s.arrays() {
		for i := range arr {
			fn(&arr[i])
		}
	}
	fn(&s.OversizeAllocations)
	fn(&s.OversizeSegments)
}

// Map flattens the counters under torch.cuda.memory_stats' keys, such as
// "allocated_bytes.all.current" or "num_alloc_retries".
func (s Stats) Map() map[string]int64 {
	m := make(map[string]int64, 120)
	put := func(prefix string, st Stat) {
		m[prefix+"current"] = st.Current
		m[prefix+"peak"] = st.Peak
		m[prefix+"allocated"] = st.Allocated
		m[prefix+"freed"] = st.Freed
	}
	names := []string{"allocation", "segment", "active", "inactive_split",
		"allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"}
	for i, arr := range s.arrays() {
		for t := range arr {
			put(names[i]+"."+StatType(t).String()+".", arr[t])
		}
	}
	put("oversize_allocations.", s.OversizeAllocations)
	put("oversize_segments.", s.OversizeSegments)
	m["num_alloc_retries"] = s.NumAllocRetries
	m["num_ooms"] = s.NumOOMs
	m["max_split_size"] = s.MaxSplitSize
	return m
}

// Summary lays the counters out as torch.cuda.memory_summary does for
// device index dev, with "ember" in place of "PyTorch" in the title.
func (s Stats) Summary(dev int) string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	rule := func(c string) { lines = append(lines, strings.Repeat(c, 75)) }
	rule("=")
	add(" %16s   ember CUDA memory summary, device ID %-17d ", "", dev)
	rule("-")
	add("  %9s CUDA OOMs: %-12d | %6s cudaMalloc retries: %-8d  ", "", s.NumOOMs, "", s.NumAllocRetries)
	rule("=")
	add("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ")
	metrics := []struct {
		arr    *StatArray
		name   string
		format func(v int64, pref float64) string
	}{
		{&s.AllocatedBytes, "Allocated memory", summarySize},
		{&s.ActiveBytes, "Active memory", summarySize},
		{&s.ReservedBytes, "GPU reserved memory", summarySize},
		{&s.InactiveSplitBytes, "Non-releasable memory", summarySize},
		{&s.Allocation, "Allocations", summaryCount},
		{&s.Active, "Active allocs", summaryCount},
		{&s.Segment, "GPU reserved segments", summaryCount},
		{&s.InactiveSplit, "Non-releasable allocs", summaryCount},
	}
	row := func(name string, st, pref Stat, format func(int64, float64) string) {
		add(" %-21s | %s | %s | %s | %s ", name,
			format(st.Current, float64(pref.Current)), format(st.Peak, float64(pref.Peak)),
			format(st.Allocated, float64(pref.Allocated)), format(st.Freed, float64(pref.Freed)))
	}
	for _, m := range metrics {
		rule("-")
		all := m.arr[StatAll]
		row(m.name, all, all, m.format)
		row("      from large pool", m.arr[StatLargePool], all, m.format)
		row("      from small pool", m.arr[StatSmallPool], all, m.format)
	}
	for _, m := range []struct {
		st   Stat
		name string
	}{{s.OversizeAllocations, "Oversize allocations"}, {s.OversizeSegments, "Oversize GPU segments"}} {
		rule("-")
		row(m.name, m.st, m.st, summaryCount)
	}
	rule("=")
	return "|" + strings.Join(lines, "|\n|") + "|\n"
}

// summarySize is memory_summary's _format_size: the unit is chosen from
// the "all" row's value pref so that a column shares one unit.
func summarySize(v int64, pref float64) string {
	units := []string{"B ", "KB", "MB", "GB", "TB", "PB"}
	unit := units[0]
	for _, u := range units[1:] {
		if pref < 768*1024 {
			break
		}
		unit = u
		v = floorDiv(v, 1024)
		pref /= 1024
	}
	return fmt.Sprintf("%7d %s", v, unit)
}

// summaryCount is memory_summary's _format_count.
func summaryCount(v int64, pref float64) string {
	units := []string{" ", "K", "M"}
	unit := units[0]
	for _, u := range units[1:] {
		if pref < 750*1000 {
			break
		}
		unit = u
		v = floorDiv(v, 1000)
		pref /= 1000
	}
	return fmt.Sprintf("%7d %s ", v, unit)
}

// floorDiv is Python's // on integers.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
