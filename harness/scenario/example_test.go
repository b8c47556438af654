package scenario_test

import (
	"fmt"

	"github.com/aebench/aebench/harness/scenario"
)

// A list-valued field makes a matrix: one cell per value, backends innermost.
func ExampleParseScenario() {
	s, err := scenario.ParseScenario("example.yaml", []byte(`
name: example
backends: [zset, dual]
producers: {rate: [500, 2000]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range s.Runs() {
		fmt.Println(r.ID, r.Config.Producers.Rate, r.Calibration)
	}
	_, err = scenario.ParseScenario("bad.yaml", []byte("name: bad\nbackends: [zset]\nworkers: {count: 0}\n"))
	fmt.Println(err)
	// Output:
	// c1-calibration 500 true
	// c1-zset 500 false
	// c1-dual 500 false
	// c2-calibration 2000 true
	// c2-zset 2000 false
	// c2-dual 2000 false
	// bad.yaml:3:18: workers.count: 0 is out of range 1..1024; allowed: an integer 1..1024
}
