// The built-in offline test generator for Go modules. team-testing builds this program with the
// project's own go and runs it in the sandbox, in a mirror of the module: the request arrives as
// JSON on stdin, the result leaves as JSON on stdout, progress goes to stderr.
//
// The stages: load (packages type-checked with go/types, exported functions, methods and
// constructors), values (inputs by type), probe (one harness test file per package, built once
// with -cover, each candidate run as its own process with its own coverage profile), search
// (generations kept by the coverage blocks they reach, defects and effects), render
// (table-driven tests) and deliver (the files built, run and vetted once more).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// ModuleRef is one source file to test: module "stats/mean", file "stats/mean.go".
type ModuleRef struct {
	Module string `json:"module"`
	File   string `json:"file"`
}

// Request is what team-testing asks for.
type Request struct {
	Modules       []ModuleRef      `json:"modules"`
	Layer         string           `json:"layer"`
	Seed          uint64           `json:"seed"`
	BudgetS       float64          `json:"budget_s"`
	CallTimeoutS  float64          `json:"call_timeout_s"`
	TargetPercent float64          `json:"target_percent"`
	Missing       map[string][]int `json:"missing"`
	Avoid         []string         `json:"avoid"`
	// The go program, the module path go.mod declares, and a folder of the helper's own for
	// test binaries, profiles and the homes candidates run with.
	Go         string `json:"go"`
	ModulePath string `json:"module_path"`
	Work       string `json:"work"`
	// "mutants" lists the mutation points of Files instead of generating tests.
	Mode  string   `json:"mode"`
	Files []string `json:"files"`
	// The lines of each module-relative file a change added or modified: its functions and
	// their callers get more candidates, and what they ran is listed for a replay.
	Changed map[string][]int `json:"changed"`
	// Replay asks to run listed calls again (on another version of the module) instead.
	Replay *ReplayBody `json:"replay"`
	// A replay loads every function of the packages, not only the requested files'.
	everyFile bool
}

// GenModule is one source file's delivered tests.
type GenModule struct {
	Module       string   `json:"module"`
	File         string   `json:"file"`
	TestFile     string   `json:"test_file"`
	Source       string   `json:"source"`
	Tests        []string `json:"tests"`
	LinesTotal   int      `json:"lines_total"`
	LinesCovered int      `json:"lines_covered"`
	ImportError  *string  `json:"import_error"`
	// Calls the search ran on the file, for a replay on another version of the code.
	Calls []Call `json:"calls"`
}

// Finding is what the search learnt about the code: a defect, an effect, a broken example.
type Finding struct {
	Module   string  `json:"module"`
	Function string  `json:"function"`
	Kind     string  `json:"kind"`
	Call     string  `json:"call"`
	Expected *string `json:"expected"`
	Actual   *string `json:"actual"`
	Test     *string `json:"test"`
}

// Result is what the helper prints.
type Result struct {
	Modules  []GenModule            `json:"modules"`
	Findings []Finding              `json:"findings"`
	Stats    map[string]interface{} `json:"stats"`
}

func main() {
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "ttgen: cannot read the request: %v\n", err)
		os.Exit(2)
	}
	switch {
	case req.Mode == "mutants":
		answer(mutantsResult(req.Files))
	case req.Replay != nil:
		answer(replay(&req))
	default:
		result, err := run(&req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttgen: %v\n", err)
			os.Exit(1)
		}
		answer(result)
	}
}

// answer prints the result on stdout.
func answer(v interface{}) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "ttgen: %v\n", err)
		os.Exit(1)
	}
}

// Clock is the search's budget.
type Clock struct {
	start  time.Time
	budget time.Duration
}

func (c Clock) elapsed() time.Duration { return time.Since(c.start) }

// within says whether a fraction of the budget is still ahead.
func (c Clock) within(fraction float64) bool {
	return c.elapsed() < time.Duration(float64(c.budget)*fraction)
}

func run(req *Request) (*Result, error) {
	clock := Clock{start: time.Now(), budget: time.Duration(req.BudgetS * float64(time.Second))}
	if req.Go == "" {
		req.Go = "go"
	}
	if err := os.MkdirAll(req.Work, 0o755); err != nil {
		return nil, err
	}
	stats := map[string]interface{}{}
	result := &Result{Modules: []GenModule{}, Findings: []Finding{}, Stats: stats}
	l2 := strings.HasPrefix(req.Layer, "L2")
	if strings.HasPrefix(req.Layer, "L3") {
		stats["entry_points"] = 0
		return result, nil
	}
	mod, err := load(req)
	if err != nil {
		return nil, err
	}
	stats["packages"] = len(mod.Pkgs)
	stats["callables"] = len(mod.Callables)
	search := newSearch(req, mod, clock, l2)
	search.run()
	for k, v := range search.stats {
		stats[k] = v
	}
	if l2 && search.stats["candidates"] == 0 {
		stats["not_applicable"] = "no exported type with two or more methods to call in sequence: " +
			"the API is single calls"
		return result, nil
	}
	delivered := deliver(search)
	// What delivery learnt goes into the same statistics as what the search did.
	for _, part := range []map[string]interface{}{search.stats, delivered.stats} {
		for k, v := range part {
			stats[k] = v
		}
	}
	result.Modules = delivered.modules
	result.Findings = delivered.findings
	left := []string{}
	for _, l := range mod.LeftOut {
		left = append(left, l)
	}
	stats["left_out"] = left
	stats["seconds"] = clock.elapsed().Seconds()
	return result, nil
}

// debug logs every candidate's outcome (TTGEN_DEBUG=1).
var debug = os.Getenv("TTGEN_DEBUG") != ""

// logf reports progress on stderr.
func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "ttgen: "+format+"\n", args...)
}
