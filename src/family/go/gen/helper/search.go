package main

// The search: generations of candidates per package, each built once and run one by one;
// a candidate is kept when it reaches coverage blocks no earlier one did, or shows an outcome
// its callable had not shown (an error, a panic). A runtime panic in the module's own code on
// well-typed input is a code defect (the shortest call kept, defects.go); a call that leaves
// anything in its homes, its working folder or the temporary folder, or that the sandbox
// refused, is a side effect, and its callable (or the constructors that made its values) is
// never called again. A change's functions and their callers get twice the candidates, and
// what they ran is listed for a replay (calls.go).

import (
	"fmt"
	"go/types"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Rand is SplitMix64: the same seed, the same files.
type Rand struct{ state uint64 }

func (r *Rand) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *Rand) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}

// Kept is a candidate the delivered tests will hold.
type Kept struct {
	C *Candidate
	O *Outcome
}

// Defect is a runtime panic in the module's own code.
type Defect struct {
	C        *Candidate
	O        *Outcome
	Class    string
	Evidence string
	Call     string
}

// Search holds what the generations found.
type Search struct {
	req     *Request
	m       *Module
	clock   Clock
	l2      bool
	rng     *Rand
	nextID  int
	kept    []*Kept
	defects []*Defect
	// Side effects and broken examples.
	findings []Finding
	covered  map[string]bool
	blocks   map[string]Block
	probes   map[*Pkg]*Probe
	values   map[*Pkg]*Values
	banned   map[*Callable]bool
	slow     map[*Callable]int
	slowArgs map[string]bool
	stats    map[string]interface{}
	examples []*ExampleFailure
	shown    map[string]bool // callable|outcome class already kept
	// The callables a change touched and their callers, and what each ran (for a replay).
	aim     map[*Callable]bool
	ran     map[*Callable][]*Candidate
	ranText map[string]bool
	// The generation running, and the last one that added a call to each touched callable.
	gen    int
	grewAt map[*Callable]int
}

// ExampleFailure is one of the package's examples whose output no longer holds.
type ExampleFailure struct {
	Pkg      *Pkg
	Example  *Example
	Got      string
	Want     string
	Function string
	// The body as the test holds it, made once (making it rewrites the example's syntax).
	body *string
}

const maxRowsPerCallable = 12

// maxGenerations bounds the search when every generation still finds new blocks.
const maxGenerations = 8

func newSearch(req *Request, m *Module, clock Clock, l2 bool) *Search {
	s := &Search{req: req, m: m, clock: clock, l2: l2, rng: &Rand{state: req.Seed},
		covered: map[string]bool{}, blocks: map[string]Block{}, probes: map[*Pkg]*Probe{},
		values: map[*Pkg]*Values{}, banned: map[*Callable]bool{}, slow: map[*Callable]int{}, slowArgs: map[string]bool{}, shown: map[string]bool{},
		stats: map[string]interface{}{"candidates": 0, "generations": 0, "timed_out": 0,
			"stopped": 0, "compile_errors": 0, "side_effects": 0, "stopped_by_budget": false},
		aim: aimAt(m, req.Changed), ran: map[*Callable][]*Candidate{}, ranText: map[string]bool{},
		grewAt: map[*Callable]int{}}
	timeout := time.Duration(req.CallTimeoutS * float64(time.Second))
	if timeout < time.Second {
		timeout = time.Second
	}
	for _, pkg := range m.Pkgs {
		s.probes[pkg] = &Probe{m: m, pkg: pkg, layer: req.Layer, work: req.Work, timeout: timeout,
			compileErrors: map[string]string{}}
		s.values[pkg] = newValues(m, pkg)
	}
	return s
}

func (s *Search) run() {
	if !s.l2 {
		s.checkExamples()
	}
	// Constructors that can fail run first: what they accept makes every later value.
	if !s.l2 {
		for _, pkg := range s.m.Pkgs {
			if cands := s.constructorCandidates(pkg); len(cands) > 0 {
				s.runGeneration(pkg, cands)
			}
		}
	}
	stale := 0
	for gen := 0; gen < maxGenerations; gen++ {
		if gen > 0 && !s.clock.within(0.75) {
			s.stats["stopped_by_budget"] = true
			break
		}
		before := len(s.covered)
		total := 0
		s.gen = gen
		for _, pkg := range s.m.Pkgs {
			cands := s.candidates(pkg, gen)
			if len(cands) == 0 {
				continue
			}
			total += len(cands)
			s.runGeneration(pkg, cands)
		}
		s.stats["generations"] = gen + 1
		// Random generations go on after one that found nothing new (the next draw may),
		// not after two: a rule of the runs, not of the clock, so the same seed gives the
		// same files on a slower machine.
		if gen > 0 && len(s.covered) == before {
			stale++
		} else {
			stale = 0
		}
		if total == 0 || s.fullyCovered() || stale >= 2 {
			break
		}
	}
	compile := 0
	var samples []string
	for _, pkg := range s.m.Pkgs {
		p := s.probes[pkg]
		compile += len(p.compileErrors)
		var keys []string
		for k := range p.compileErrors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(samples) < 5 {
				samples = append(samples, k+": "+p.compileErrors[k])
			}
		}
	}
	s.stats["compile_errors"] = compile
	if len(samples) > 0 {
		s.stats["compile_error_samples"] = samples
	}
	s.stats["kept"] = len(s.kept)
	stmts, ran := 0, 0
	for key, b := range s.blocks {
		stmts += b.Stmts
		if s.covered[key] {
			ran += b.Stmts
		}
	}
	if stmts > 0 {
		s.stats["search_statements_percent"] = float64(ran) * 100 / float64(stmts)
	}
	s.stats["defects"] = len(s.defects)
}

func (s *Search) fullyCovered() bool {
	return len(s.blocks) > 0 && len(s.covered) >= len(s.blocks)
}

// callables of a package the search may call.
func (s *Search) callables(pkg *Pkg) []*Callable {
	var out []*Callable
	for _, c := range s.m.Callables {
		if c.Pkg == pkg && !s.banned[c] {
			out = append(out, c)
		}
	}
	return out
}

func (s *Search) newCandidate(pkg *Pkg, recv *Value, steps ...Step) *Candidate {
	s.nextID++
	return &Candidate{ID: s.nextID, Pkg: pkg, Recv: recv, Steps: steps}
}

// candidates of one generation: the first systematic (each parameter through its values), the
// later ones random, aimed at callables whose lines are still missed; the functions a change
// touched and their callers get twice as many, first.
func (s *Search) candidates(pkg *Pkg, gen int) []*Candidate {
	s.values[pkg].widen(gen > 0)
	if s.l2 {
		return s.sequences(pkg, gen)
	}
	vals := s.values[pkg]
	var aimed, perCallable [][]*Candidate
	for _, c := range s.callables(pkg) {
		var out []*Candidate
		if (gen > 0 && !s.missesIn(c) && !s.wantsMore(c)) || (gen == 0 && s.fallibleConstructor(c)) {
			continue
		}
		var recvs []Value
		if c.Recv != nil {
			recvs = nonNil(vals.of(c.Sig.Recv().Type(), "", 0))
			if len(recvs) == 0 {
				s.leftOut(c, "no value of its receiver type can be made")
				continue
			}
		}
		per := 2 * maxRowsPerCallable
		if gen > 0 {
			per = 32
		}
		if s.aim[c] {
			per *= 2
		}
		var sets [][]Value
		if gen == 0 {
			sets = vals.argSets(c, 0, per)
		} else {
			sets = s.randomArgs(vals, c, per)
		}
		if sets == nil && c.Sig.Params().Len() > 0 {
			s.leftOut(c, "no value of a parameter's type can be made")
			continue
		}
		if len(sets) == 0 {
			sets = [][]Value{nil}
		}
		for i, args := range sets {
			var recv *Value
			if c.Recv != nil {
				// Receivers step on at another pace than the arguments: a value meets others,
				// not itself.
				r := recvs[(2*i+1)%len(recvs)]
				if gen > 0 {
					r = recvs[s.rng.intn(len(recvs))]
				}
				recv = &r
			}
			out = append(out, s.newCandidate(pkg, recv, Step{C: c, Args: args}))
		}
		if gen == 0 && c.Recv != nil && c.Sig.Params().Len() == 1 &&
			types.Identical(c.Sig.Params().At(0).Type(), c.Sig.Recv().Type()) {
			// A comparison of two values of its type (Compare, Equal, Less): every pair.
			args := nonNil(vals.of(c.Sig.Params().At(0).Type(), "", 0))
			for i := range recvs {
				for j := range args {
					if i != j && i < 6 && j < 6 {
						r := recvs[i]
						out = append(out, s.newCandidate(pkg, &r, Step{C: c, Args: []Value{args[j]}}))
					}
				}
			}
		}
		if gen == 0 && c.Recv != nil && len(sets) > 0 {
			// Every receiver the constructors make, with the first arguments.
			for _, r := range recvs[1:] {
				r := r
				out = append(out, s.newCandidate(pkg, &r, Step{C: c, Args: sets[0]}))
			}
		}
		if s.aim[c] {
			aimed = append(aimed, out)
		} else {
			perCallable = append(perCallable, out)
		}
	}
	return interleave(append(aimed, perCallable...))
}

// interleave takes each callable's first candidate, then each one's second, and so on: a
// generation the budget cuts short has still called every callable.
func interleave(lists [][]*Candidate) []*Candidate {
	var out []*Candidate
	for i := 0; ; i++ {
		added := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// fallibleConstructor says whether a callable makes one of its package's types and may fail.
func (s *Search) fallibleConstructor(c *Callable) bool {
	return c.Makes != nil && c.Sig.Results().Len() == 2
}

// constructorCandidates are the fallible constructors through their inputs.
func (s *Search) constructorCandidates(pkg *Pkg) []*Candidate {
	vals := s.values[pkg]
	var out []*Candidate
	for _, c := range s.callables(pkg) {
		if !s.fallibleConstructor(c) {
			continue
		}
		// Every value of every parameter: constructors are few, and each accepted input counts.
		for _, args := range vals.argSets(c, 0, 96) {
			out = append(out, s.newCandidate(pkg, nil, Step{C: c, Args: args}))
		}
	}
	return out
}

func nonNil(vals []Value) []Value {
	var out []Value
	for _, v := range vals {
		if !v.Nil {
			out = append(out, v)
		}
	}
	return out
}

func (s *Search) leftOut(c *Callable, why string) {
	entry := c.Pkg.Alias + "." + c.Name + ": " + why
	for _, l := range s.m.LeftOut {
		if l == entry {
			return
		}
	}
	s.m.LeftOut = append(s.m.LeftOut, entry)
}

// randomArgs are n argument lists drawn at random from each parameter's values.
func (s *Search) randomArgs(vals *Values, c *Callable, n int) [][]Value {
	params := c.Sig.Params()
	pools := make([][]Value, params.Len())
	for i := range pools {
		pools[i] = vals.pool(c, i, 0)
		if len(pools[i]) == 0 {
			return nil
		}
	}
	var out [][]Value
	for k := 0; k < n; k++ {
		row := make([]Value, len(pools))
		for i := range pools {
			row[i] = pools[i][s.rng.intn(len(pools[i]))]
		}
		out = append(out, row)
	}
	return out
}

// missesIn says whether coverage blocks within the callable's lines are still missed (or the
// lines team-testing asked about).
func (s *Search) missesIn(c *Callable) bool {
	for _, line := range s.req.Missing[c.File] {
		if line >= c.Line && line <= c.End {
			return true
		}
	}
	file := s.m.Path + "/" + c.File
	for key, b := range s.blocks {
		if !s.covered[key] && b.File == file && b.Start >= c.Line && b.End <= c.End {
			return true
		}
	}
	return false
}

// sequences are L2's candidates: method calls in sequence on one value of a type.
func (s *Search) sequences(pkg *Pkg, gen int) []*Candidate {
	vals := s.values[pkg]
	byType := map[*types.Named][]*Callable{}
	var order []*types.Named
	for _, c := range s.callables(pkg) {
		if c.Recv == nil {
			continue
		}
		if _, seen := byType[c.Recv]; !seen {
			order = append(order, c.Recv)
		}
		byType[c.Recv] = append(byType[c.Recv], c)
	}
	var out []*Candidate
	// The first generation's pairs stop at 40 in all; a type with a method the change touched
	// adds 40 more, and gets twice the random sequences later.
	pairs := 40
	for _, t := range s.aimedFirst(order, byType) {
		methods := byType[t]
		if len(methods) < 2 {
			continue
		}
		draws := 16
		if s.aimsAtAny(methods) {
			pairs, draws = pairs+40, 32
		}
		recvs := nonNil(vals.of(types.NewPointer(t), "", 0))
		if len(recvs) == 0 {
			recvs = nonNil(vals.of(t, "", 0))
		}
		if len(recvs) == 0 {
			continue
		}
		first := func(c *Callable) []Value {
			sets := vals.argSets(c, 0, 1)
			if len(sets) == 0 {
				if c.Sig.Params().Len() > 0 {
					return nil
				}
				return []Value{}
			}
			return sets[0]
		}
		if gen == 0 {
			for i, a := range methods {
				for j, b := range methods {
					if i == j || len(out) > pairs {
						continue
					}
					aa, ba := first(a), first(b)
					if aa == nil || ba == nil {
						continue
					}
					r := recvs[(i+j)%len(recvs)]
					out = append(out, s.newCandidate(pkg, &r, Step{C: a, Args: aa}, Step{C: b, Args: ba}))
				}
			}
			continue
		}
		for k := 0; k < draws; k++ {
			n := 2 + s.rng.intn(3)
			var steps []Step
			for len(steps) < n {
				c := methods[s.rng.intn(len(methods))]
				sets := s.randomArgs(vals, c, 1)
				if c.Sig.Params().Len() > 0 && len(sets) == 0 {
					break
				}
				args := []Value{}
				if len(sets) > 0 {
					args = sets[0]
				}
				steps = append(steps, Step{C: c, Args: args})
			}
			if len(steps) >= 2 {
				r := recvs[s.rng.intn(len(recvs))]
				out = append(out, s.newCandidate(pkg, &r, steps...))
			}
		}
	}
	return out
}

// aimedFirst orders types with a method the change touched first.
func (s *Search) aimedFirst(order []*types.Named, byType map[*types.Named][]*Callable) []*types.Named {
	out := append([]*types.Named(nil), order...)
	sort.SliceStable(out, func(i, j int) bool {
		return s.aimsAtAny(byType[out[i]]) && !s.aimsAtAny(byType[out[j]])
	})
	return out
}

// aimsAtAny says whether one of the callables is aimed at: the change touched it or code it
// calls.
func (s *Search) aimsAtAny(cs []*Callable) bool {
	for _, c := range cs {
		if s.aim[c] {
			return true
		}
	}
	return false
}

// runGeneration builds and runs one package's candidates and keeps what they teach.
func (s *Search) runGeneration(pkg *Pkg, cands []*Candidate) {
	probe := s.probes[pkg]
	cands, bin, err := probe.build(cands)
	if err != nil {
		logf("%s: %v", pkg.ImportPath, err)
		s.m.LeftOut = append(s.m.LeftOut, fmt.Sprintf("%s: %v", pkg.ImportPath, err))
		for _, c := range s.callables(pkg) {
			s.banned[c] = true
		}
		return
	}
	if o := probe.runOne(bin, 0); len(o.Effects) > 0 {
		// The package's own TestMain or init writes: no candidate's effect could be told apart.
		s.m.LeftOut = append(s.m.LeftOut, fmt.Sprintf("%s: its test setup (TestMain or init) changes %s",
			pkg.ImportPath, strings.Join(o.Effects, ", ")))
		for _, c := range s.callables(pkg) {
			s.banned[c] = true
		}
		return
	}
	s.stats["candidates"] = s.stats["candidates"].(int) + len(cands)
	// Candidates run as many at a time as there are processors; they are judged one by one in
	// the order they were made, so the same seed keeps the same ones.
	// mu guards the search's state; running is held shared by every run and alone by a
	// run that confirms an effect, so nothing else runs beside it.
	var mu sync.Mutex
	var running sync.RWMutex
	skip := func(c *Candidate) bool {
		return s.banned[c.Steps[len(c.Steps)-1].C] || s.slowWith(c)
	}
	results := make([]chan *Outcome, len(cands))
	for i := range results {
		results[i] = make(chan *Outcome, 1)
	}
	next := make(chan int)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(next)
		for i := range cands {
			select {
			case next <- i:
			case <-done:
				return
			}
		}
	}()
	for w := 0; w < runtime.NumCPU(); w++ {
		go func() {
			for i := range next {
				mu.Lock()
				skipped := skip(cands[i]) || !s.clock.within(0.95)
				mu.Unlock()
				if skipped {
					results[i] <- nil
					continue
				}
				running.RLock()
				o := probe.runOne(bin, cands[i].ID)
				running.RUnlock()
				results[i] <- o
			}
		}()
	}
	for i, c := range cands {
		o := <-results[i]
		mu.Lock()
		if !s.clock.within(0.95) {
			s.stats["stopped_by_budget"] = true
			mu.Unlock()
			return
		}
		if skip(c) {
			mu.Unlock()
			continue
		}
		if o == nil || len(o.Effects) > 0 {
			// Skipped by a worker that saw a later judgment, or an effect another run may
			// have made: run it again, alone.
			running.Lock()
			o = probe.runOne(bin, c.ID)
			running.Unlock()
		}
		// Every block a profile lists, ran or not, is the universe coverage is measured in.
		for _, b := range o.Blocks {
			s.blocks[b.Key] = b
		}
		s.judge(c, o)
		mu.Unlock()
	}
}

// makersIn are the package's callables a candidate's receiver and arguments call.
func (s *Search) makersIn(c *Candidate) []*Callable {
	var exprs []string
	if c.Recv != nil {
		exprs = append(exprs, c.Recv.Expr)
	}
	for _, st := range c.Steps {
		for _, a := range st.Args {
			exprs = append(exprs, a.Expr)
		}
	}
	var out []*Callable
	for _, fn := range s.callables(c.Pkg) {
		if fn.Recv != nil {
			continue
		}
		for _, e := range exprs {
			if strings.Contains(e, fn.Pkg.Alias+"."+fn.Name+"(") {
				out = append(out, fn)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []*Callable{c.Steps[0].C}
	}
	return out
}

// What the sandbox answers a write or a connection it refuses: the call reached outside.
var deniedMarks = []string{"permission denied", "read-only file system", "operation not permitted"}

func deniedBySandbox(o *Outcome) bool { return deniedText(o) != "" }

// deniedText is the line of a run that shows the sandbox refused something.
func deniedText(o *Outcome) string {
	texts := []string{o.Panic_()}
	for _, rs := range o.Results {
		for _, x := range rs {
			if x.ErrText != nil {
				texts = append(texts, *x.ErrText)
			}
		}
	}
	texts = append(texts, o.Output)
	for _, t := range texts {
		lower := strings.ToLower(t)
		for _, m := range deniedMarks {
			if strings.Contains(lower, m) {
				return firstLine(t[strings.Index(lower, m):])
			}
		}
	}
	return ""
}

// slowWith says whether a candidate gives its call an input it already ran past its time with.
func (s *Search) slowWith(c *Candidate) bool {
	st := c.Steps[len(c.Steps)-1]
	for _, a := range st.Args {
		if s.slowArgs[st.C.Name+"|"+a.Expr] || (s.slowArgs[a.Expr] && (a.Tag == "max" || a.Tag == "min")) {
			return true
		}
	}
	return false
}

// judge keeps, drops or reports one candidate.
func (s *Search) judge(c *Candidate, o *Outcome) {
	if debug {
		logf("#%d %s: panic=%v stopped=%q effects=%v features=%d", c.ID, callText(c, len(c.Steps)), o.Panic_(), o.Stopped, o.Effects, len(o.Features))
	}
	last := c.Steps[len(c.Steps)-1].C
	if len(o.Effects) > 0 || deniedBySandbox(o) {
		s.stats["side_effects"] = s.stats["side_effects"].(int) + 1
		// The call that ran when it happened, or every constructor that made its values.
		var culprits []*Callable
		if o.Step >= 0 && o.Step < len(c.Steps) {
			culprits = []*Callable{c.Steps[o.Step].C}
		} else {
			culprits = s.makersIn(c)
		}
		actual := "changed " + strings.Join(o.Effects, ", ")
		if len(o.Effects) == 0 {
			actual = "the sandbox refused it: " + deniedText(o)
		}
		for _, fn := range culprits {
			if s.banned[fn] {
				continue
			}
			s.banned[fn] = true
			s.findings = append(s.findings, Finding{Module: moduleOf(fn.File), Function: fn.Pkg.Alias + "." + fn.Name,
				Kind: "side_effect", Call: callText(c, len(c.Steps)), Actual: &actual})
			s.dropKept(fn)
		}
		return
	}
	if o.Stopped != "" {
		if strings.Contains(o.Stopped, "timed out") {
			s.stats["timed_out"] = s.stats["timed_out"].(int) + 1
			// The inputs it ran past its time with are not given to it again; a callable that
			// does so twice is slow by nature and not called again.
			s.slow[last]++
			// (Any callable: a huge precision or count is slow wherever it goes.)
			for _, a := range c.Steps[len(c.Steps)-1].Args {
				if a.Tag == "max" || a.Tag == "min" || len(c.Steps[len(c.Steps)-1].Args) == 1 {
					s.slowArgs[a.Expr] = true
				} else {
					s.slowArgs[last.Name+"|"+a.Expr] = true
				}
			}
			if s.slow[last] >= 2 {
				s.banned[last] = true
				s.leftOut(last, "ran past the call timeout twice")
			}
		} else {
			s.stats["stopped"] = s.stats["stopped"].(int) + 1
		}
		return
	}
	s.noteRan(c, o)
	if o.Panic != nil {
		s.judgePanic(c, o)
		return
	}
	if s.tmpInObs(o) {
		return
	}
	newBlocks := s.cover(o)
	if len(c.Steps) == 1 && outcomeClass(o) == "ok" && c.Recv == nil && len(o.Results) == 1 && len(o.Results[0]) > 0 {
		// A constructor call that made a value unlike the others gives later calls one more.
		key := last.Pkg.Alias + "." + last.Name + "|made|" + o.Results[0][0].Text
		if !s.shown[key] {
			s.shown[key] = true
			s.values[c.Pkg].learn(last, c.Steps[0].Args)
		}
	}
	class := last.Pkg.Alias + "." + last.Name + "|" + outcomeClass(o)
	if newBlocks > 0 || !s.shown[class] {
		if s.rowsOf(last) >= maxRowsPerCallable && newBlocks == 0 {
			return
		}
		s.shown[class] = true
		s.kept = append(s.kept, &Kept{C: c, O: o})
	}
}

// cover adds an outcome's blocks; it returns how many were new.
func (s *Search) cover(o *Outcome) int {
	n := 0
	for _, f := range o.Features {
		if !s.covered[f] {
			s.covered[f] = true
			n++
		}
	}
	return n
}

func (s *Search) rowsOf(c *Callable) int {
	n := 0
	for _, k := range s.kept {
		if k.C.Steps[len(k.C.Steps)-1].C == c {
			n++
		}
	}
	return n
}

func (s *Search) dropKept(c *Callable) {
	kept := s.kept[:0]
	for _, k := range s.kept {
		uses := false
		for _, st := range k.C.Steps {
			uses = uses || st.C == c
		}
		if !uses {
			kept = append(kept, k)
		}
	}
	s.kept = kept
}

// tmpInObs says whether an observed value names the run's temporary folders (it would differ
// in every run).
func (s *Search) tmpInObs(o *Outcome) bool {
	check := func(obs []Obs) bool {
		for _, x := range obs {
			if strings.Contains(x.Text, s.req.Work) || strings.Contains(x.Text, "TestTTProbe") {
				return true
			}
		}
		return false
	}
	for _, rs := range o.Results {
		if check(rs) {
			return true
		}
	}
	return false
}

// outcomeClass is what kind of outcome a run had: "ok", "error".
func outcomeClass(o *Outcome) string {
	for _, rs := range o.Results {
		for _, x := range rs {
			if x.ErrText != nil {
				return "error"
			}
		}
	}
	return "ok"
}

// callText is the candidate's calls up to step n, as one line a person reads.
func callText(c *Candidate, n int) string {
	var parts []string
	for i, st := range c.Steps[:n] {
		args := make([]string, len(st.Args))
		for j, a := range st.Args {
			args[j] = a.Expr
			if st.C.Sig.Variadic() && j == len(st.Args)-1 {
				args[j] += "..."
			}
		}
		call := st.C.Func.Name() + "(" + strings.Join(args, ", ") + ")"
		switch {
		case st.C.Recv == nil:
			call = st.C.Pkg.Alias + "." + call
		case i == 0 && c.Recv != nil:
			call = c.Recv.Expr + "." + call
		}
		parts = append(parts, call)
	}
	if len(parts) > 1 && c.Recv != nil {
		return "v := " + c.Recv.Expr + "; v." + strings.Join(trimFirst(parts, c.Recv.Expr+"."), "; v.")
	}
	return strings.Join(parts, "; ")
}

func trimFirst(parts []string, prefix string) []string {
	out := append([]string(nil), parts...)
	out[0] = strings.TrimPrefix(out[0], prefix)
	return out
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// moduleOf is a source file's module name as team-testing gave it: "stats/mean".
func moduleOf(file string) string { return strings.TrimSuffix(file, ".go") }

// sortedKept is the kept candidates in the order they were made.
func (s *Search) sortedKept() []*Kept {
	out := append([]*Kept(nil), s.kept...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].C.ID < out[j].C.ID })
	return out
}
