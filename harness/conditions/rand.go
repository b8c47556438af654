package conditions

// Splitmix is a tiny seeded generator: a job's id and attempt hash to a
// state, so the same job behaves the same way on every backend.
type Splitmix uint64

func (s *Splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float returns a number in [0,1).
func (s *Splitmix) Float() float64 { return float64(s.next()>>11) / (1 << 53) }

// JobRand seeds a Splitmix from a run seed, a job id and an attempt (FNV-1a).
func JobRand(seed int64, id string, attempt int) Splitmix {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= uint64(attempt) * 0x9e3779b97f4a7c15
	s := Splitmix(h ^ uint64(seed))
	s.next()
	return s
}
