package ledger

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The ledger's index: where a job's entry lives.
//
// Every job the harness makes has an id of the form "f-<n>" (prefill) or
// "p<k>-<n>" (producer k), with n counting up. Those entries live in a
// dense table, family by family, in chunks of entryBlocks indexed by n:
// found with a parse and a few loads, and laid out in the order the jobs
// were made, which is the order a FIFO store hands them out. The map of a
// shard, where they lived until 2026-11-27, cost a string hash and a
// probe per event and scattered consecutive jobs over the heap: with a
// prefill of 300k jobs, every start and completion missed the cache
// (which Redis, on the same cores, shares), and aebench's floor ran about
// 10% slower than a build with no ledger at all (docs/results.md). Any
// other id (a store's, a seed variant's, one never planned) goes to its
// shard's map as before.
//
// Locks: an entry is guarded by its shard's lock in both places (the dense
// table picks the shard from n, so that consecutive jobs take different
// locks). A lookup takes no lock: the directories sit behind atomic
// pointers, a family's chunk directory doubles when it fills (copied, so
// a long run copies it a logarithmic number of times) and its slots are
// atomic, so that a chunk made later in a published directory is seen
// whole. Only growth takes the table's lock.

const (
	denseChunkBits = 10
	denseChunk     = 1 << denseChunkBits
	// denseFamilies bounds the families (the prefill and producers
	// 0..denseFamilies-2); a larger producer number uses the maps.
	denseFamilies = 1 << 12
	// denseMaxChunks bounds a family's directory (about 4 billion jobs).
	denseMaxChunks = 1 << 22
)

// denseKey is a harness id parsed: its family (0 the prefill, k+1
// producer k) and its sequence number.
type denseKey struct {
	fam int
	n   int64
}

// harnessKey parses id when it is a harness id in canonical form (no sign,
// no leading zeros), so that distinct ids never share a slot.
func harnessKey(id string) (denseKey, bool) {
	var k denseKey
	var rest string
	switch {
	case strings.HasPrefix(id, "f-"):
		rest = id[2:]
	case len(id) > 2 && id[0] == 'p':
		i := strings.IndexByte(id, '-')
		if i < 2 {
			return k, false
		}
		p, ok := canonicalNumber(id[1:i])
		if !ok || p >= denseFamilies-1 {
			return k, false
		}
		k.fam, rest = int(p)+1, id[i+1:]
	default:
		return k, false
	}
	n, ok := canonicalNumber(rest)
	k.n = n
	return k, ok
}

func canonicalNumber(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// id is the id k was parsed from.
func (k denseKey) id() string {
	if k.fam == 0 {
		return "f-" + strconv.FormatInt(k.n, 10)
	}
	return "p" + strconv.Itoa(k.fam-1) + "-" + strconv.FormatInt(k.n, 10)
}

// shard is the shard whose lock guards k's entry.
func (k denseKey) shard(l *Ledger) *ledgerShard {
	return &l.shards[(uint64(k.n)+uint64(k.fam))%uint64(len(l.shards))]
}

type entryChunk [denseChunk]entryBlock

type denseFamily struct {
	chunks atomic.Pointer[[]atomic.Pointer[entryChunk]]
}

// chunk is chunk c of f, nil when it was never made.
func (f *denseFamily) chunk(c int64) *entryChunk {
	if cs := f.chunks.Load(); cs != nil && c < int64(len(*cs)) {
		return (*cs)[c].Load()
	}
	return nil
}

// denseTable holds the entries of harness ids. A slot is planned when its
// entry's attempts slice is set (entryBlock.reset).
type denseTable struct {
	grow sync.Mutex
	fams atomic.Pointer[[]*denseFamily]
}

// slot is k's block: nil when its chunk does not exist and grow is false,
// or when k lies beyond the table's bounds. Growth is for Planned only,
// so a stray id never allocates.
func (t *denseTable) slot(k denseKey, grow bool) *entryBlock {
	c := k.n >> denseChunkBits
	if c >= denseMaxChunks {
		return nil
	}
	if fs := t.fams.Load(); fs != nil && k.fam < len(*fs) {
		if f := (*fs)[k.fam]; f != nil {
			if ch := f.chunk(c); ch != nil {
				return &ch[k.n&(denseChunk-1)]
			}
		}
	}
	if !grow {
		return nil
	}
	t.grow.Lock()
	defer t.grow.Unlock()
	f := t.family(k.fam)
	ch := f.chunk(c)
	if ch == nil {
		ch = new(entryChunk)
		cs := f.chunks.Load()
		if cs == nil || c >= int64(len(*cs)) {
			var old []atomic.Pointer[entryChunk]
			if cs != nil {
				old = *cs
			}
			next := make([]atomic.Pointer[entryChunk], max(2*int64(len(old)), c+1, 8))
			for i := range old {
				next[i].Store(old[i].Load())
			}
			cs = &next
			f.chunks.Store(cs)
		}
		(*cs)[c].Store(ch)
	}
	return &ch[k.n&(denseChunk-1)]
}

// family is family fam, made if missing; t.grow is held.
func (t *denseTable) family(fam int) *denseFamily {
	var fs []*denseFamily
	if p := t.fams.Load(); p != nil {
		fs = *p
	}
	if fam < len(fs) && fs[fam] != nil {
		return fs[fam]
	}
	next := make([]*denseFamily, max(len(fs), fam+1))
	copy(next, fs)
	next[fam] = &denseFamily{}
	t.fams.Store(&next)
	return next[fam]
}

// each calls f on every slot of the table, planned or not, with its key.
func (t *denseTable) each(f func(k denseKey, b *entryBlock)) {
	fs := t.fams.Load()
	if fs == nil {
		return
	}
	for fam, df := range *fs {
		if df == nil {
			continue
		}
		cs := df.chunks.Load()
		if cs == nil {
			continue
		}
		for c := range *cs {
			ch := (*cs)[c].Load()
			if ch == nil {
				continue
			}
			for i := range ch {
				f(denseKey{fam: fam, n: int64(c)<<denseChunkBits | int64(i)}, &ch[i])
			}
		}
	}
}

// locate is the shard whose lock guards id's entry, and id's dense slot
// when it has one (the entry is then read there, else in the shard's map).
func (l *Ledger) locate(id string) (*ledgerShard, *entryBlock) {
	if k, ok := harnessKey(id); ok {
		if b := l.dense.slot(k, false); b != nil {
			return k.shard(l), b
		}
	}
	return l.shard(id), nil
}

// entryAt is id's entry found by locate, or nil when id was never planned;
// s's lock is held.
func (s *ledgerShard) entryAt(b *entryBlock, id string) *ledgerEntry {
	if b != nil {
		if b.e.attempts == nil {
			return nil
		}
		return &b.e
	}
	return s.m[id]
}

// each calls f on every planned entry with its id, under the entry's
// shard lock.
func (l *Ledger) each(f func(id string, e *ledgerEntry)) {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, e := range s.m {
			f(id, e)
		}
		s.mu.Unlock()
	}
	l.dense.each(func(k denseKey, b *entryBlock) {
		s := k.shard(l)
		s.mu.Lock()
		if b.e.attempts != nil {
			f(k.id(), &b.e)
		}
		s.mu.Unlock()
	})
}
