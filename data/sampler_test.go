package data

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

func ranksOf(n, world int, o SamplerOptions, epoch int) [][]int {
	out := make([][]int, world)
	for r := range out {
		out[r] = NewDistributedSampler(n, r, world, o).Indices(epoch)
	}
	return out
}

func TestDistributedSamplerByHand(t *testing.T) {
	cases := []struct {
		name     string
		n, world int
		o        SamplerOptions
		want     [][]int
	}{
		// 0..9 padded with 0, 1 to 12, then r::3.
		{"in order, padded", 10, 3, SamplerOptions{NoShuffle: true}, [][]int{{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}}},
		// cut to 9.
		{"in order, drop last", 10, 3, SamplerOptions{NoShuffle: true, DropLast: true}, [][]int{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}},
		// 0, 1 repeated to 5 indices: 0 1 0 1 0.
		{"padding repeats", 2, 5, SamplerOptions{NoShuffle: true}, [][]int{{0}, {1}, {0}, {1}, {0}}},
		// torch.randperm(10) seeded with 0 is 4 1 7 5 3 9 0 8 6 2 (torch
		// 1.13); padded with 4 1, then r::3.
		{"shuffled, seed 0", 10, 3, SamplerOptions{}, [][]int{{4, 5, 0, 2}, {1, 3, 8, 4}, {7, 9, 6, 1}}},
		{"fewer samples than ranks, drop last", 3, 4, SamplerOptions{DropLast: true}, [][]int{{}, {}, {}, {}}},
	}
	for _, c := range cases {
		got := ranksOf(c.n, c.world, c.o, 0)
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if l := NewDistributedSampler(c.n, 0, c.world, c.o).Len(); l != len(c.want[0]) {
			t.Errorf("%s: Len %d, want %d", c.name, l, len(c.want[0]))
		}
	}
}

// TestDistributedSamplerMatchesTorch compares every rank's indices with
// those torch.utils.data.DistributedSampler gives (testdata/gen_sampler.py).
func TestDistributedSamplerMatchesTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/distributed_sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		N, World, Epoch int
		Seed            uint64
		Shuffle         bool
		DropLast        bool `json:"drop_last"`
		Ranks           [][]int
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("%d cases in the fixture", len(cases))
	}
	for _, c := range cases {
		o := SamplerOptions{Seed: c.Seed, NoShuffle: !c.Shuffle, DropLast: c.DropLast}
		if got := ranksOf(c.N, c.World, o, c.Epoch); !slices.EqualFunc(got, c.Ranks, slices.Equal) {
			t.Errorf("n=%d world=%d seed=%d shuffle=%v drop_last=%v epoch=%d:\n got %v\nwant %v",
				c.N, c.World, c.Seed, c.Shuffle, c.DropLast, c.Epoch, got, c.Ranks)
		}
	}
}

func TestDistributedSamplerProperties(t *testing.T) {
	for _, n := range []int{1, 7, 64, 1001} {
		for _, world := range []int{1, 2, 3, 8} {
			o := SamplerOptions{Seed: 9}
			e0, e1 := ranksOf(n, world, o, 0), ranksOf(n, world, o, 1)
			count := make([]int, n)
			per := (n + world - 1) / world
			for r, idx := range e0 {
				if len(idx) != per {
					t.Fatalf("n=%d world=%d: rank %d has %d indices, want %d", n, world, r, len(idx), per)
				}
				for _, i := range idx {
					count[i]++
				}
			}
			// Every sample is visited; only the padding (per*world-n of
			// them) is visited twice.
			extra := 0
			for i, c := range count {
				if c == 0 {
					t.Fatalf("n=%d world=%d: sample %d visited by no rank", n, world, i)
				}
				extra += c - 1
			}
			if extra != per*world-n {
				t.Errorf("n=%d world=%d: %d repeated visits, want %d", n, world, extra, per*world-n)
			}
			if !slices.EqualFunc(e0, ranksOf(n, world, o, 0), slices.Equal) {
				t.Errorf("n=%d world=%d: not deterministic", n, world)
			}
			if n > 8 && slices.EqualFunc(e0, e1, slices.Equal) {
				t.Errorf("n=%d world=%d: epochs 0 and 1 visit the same order", n, world)
			}
			// DropLast: disjoint, n/world each.
			seen := map[int]bool{}
			for _, idx := range ranksOf(n, world, SamplerOptions{Seed: 9, DropLast: true}, 0) {
				if len(idx) != n/world {
					t.Fatalf("n=%d world=%d drop last: %d indices, want %d", n, world, len(idx), n/world)
				}
				for _, i := range idx {
					if seen[i] {
						t.Fatalf("n=%d world=%d drop last: %d visited twice", n, world, i)
					}
					seen[i] = true
				}
			}
		}
	}
}

func TestLoaderWithSampler(t *testing.T) {
	s := NewDistributedSampler(10, 1, 3, SamplerOptions{NoShuffle: true}) // 1 4 7 0
	l := NewLoader(ramp(10), BatchSize(3), WithSampler(s), Workers(2))
	want := [][]int64{{1, 4, 7}, {0}}
	if got := collect(l, 0); l.Len() != 2 || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v (Len %d), want %v", got, l.Len(), want)
	}
	if o := NewLoader(ramp(10), WithSampler(s)).Order(5); !slices.Equal(o, []int{1, 4, 7, 0}) {
		t.Errorf("Order %v", o)
	}
	s2 := NewDistributedSampler(10, 0, 3, SamplerOptions{Seed: 1})
	l = NewLoader(ramp(10), BatchSize(4), WithSampler(s2), DropLast())
	if got := collect(l, 2); l.Len() != 1 || len(got) != 1 || !slices.Equal(got[0], toInt64(s2.Indices(2))) {
		t.Errorf("drop last: %v, want %v", got, s2.Indices(2))
	}
	defer func() {
		if recover() == nil {
			t.Error("WithSampler with Shuffle did not panic")
		}
	}()
	NewLoader(ramp(10), WithSampler(s), Shuffle(1))
}

func toInt64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func TestNewDistributedSamplerPanics(t *testing.T) {
	for _, c := range [][3]int{{10, 3, 3}, {10, -1, 2}, {10, 0, 0}, {-1, 0, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewDistributedSampler(%d, %d, %d) did not panic", c[0], c[1], c[2])
				}
			}()
			NewDistributedSampler(c[0], c[1], c[2], SamplerOptions{})
		}()
	}
}

func ExampleDistributedSampler() {
	// Rank 1 of 3 over 10 samples, in order: 0..9 padded with 0 and 1,
	// then every third index from 1.
	s := NewDistributedSampler(10, 1, 3, SamplerOptions{NoShuffle: true})
	fmt.Println(s.Indices(0), s.Len())
	// Shuffled (the default), as torch's DistributedSampler with seed 0.
	fmt.Println(NewDistributedSampler(10, 1, 3, SamplerOptions{}).Indices(0))
	// Output:
	// [1 4 7 0] 4
	// [1 3 8 4]
}

func ExampleWithSampler() {
	// Rank 0 of 2 visits what torch's DistributedSampler(range(10),
	// num_replicas=2, rank=0, seed=0) yields: 4 7 3 0 6, then 5 1 0 9 7.
	ds := ramp(10) // sample i has target i
	rank, world := 0, 2
	s := NewDistributedSampler(ds.Len(), rank, world, SamplerOptions{Seed: 0})
	loader := NewLoader(ds, BatchSize(4), WithSampler(s))
	for epoch := range 2 {
		for b := range loader.Epoch(epoch) {
			fmt.Println(epoch, b.Target.Int64s())
		}
	}
	// Output:
	// 0 [4 7 3 0]
	// 0 [6]
	// 1 [5 1 0 9]
	// 1 [7]
}
