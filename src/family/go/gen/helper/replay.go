package main

// The replay: calls an earlier search listed (calls.go) are made again on the version of the
// module in the current folder (HEAD, or the base of a change), each rebuilt from its native
// form by the names of its functions, built into a probe harness (one build per package, a
// call that no longer compiles dropped) and run twice, each run its own process as the search
// runs candidates. What a call did becomes a test body asserting it (replay_render.go), so the
// same behaviour on two versions gives the same text, and another behaviour another text.

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ReplayBody is a replay's request: the calls of each module, as a search listed them.
type ReplayBody struct {
	Modules      []ReplayModule `json:"modules"`
	CallTimeoutS float64        `json:"call_timeout_s"`
	Seed         uint64         `json:"seed"`
	Layer        string         `json:"layer"`
	Framework    string         `json:"framework"`
}

// ReplayModule is one module's calls.
type ReplayModule struct {
	Module string `json:"module"`
	File   string `json:"file"`
	Calls  []Call `json:"calls"`
}

// ReplayResult is what a replay prints.
type ReplayResult struct {
	Modules []ReplayedModule `json:"modules"`
}

// ReplayedModule is one module's replay: an entry per call, in the order asked, and a test
// file with a test for every entry that has a body.
type ReplayedModule struct {
	Module      string     `json:"module"`
	TestFile    string     `json:"test_file"`
	Source      string     `json:"source"`
	Replayed    []Replayed `json:"replayed"`
	ImportError *string    `json:"import_error"`
}

// Replayed is what one call did in this version.
type Replayed struct {
	Function string   `json:"function"`
	Expr     string   `json:"expr"`
	Test     *string  `json:"test"`
	Name     string   `json:"name"`
	Body     []string `json:"body"`
	Shown    string   `json:"shown"`
	Raised   bool     `json:"raised"`
	Stable   bool     `json:"stable"`
	Missing  bool     `json:"missing"`
	Doc      *string  `json:"doc"`
	Lines    *[2]int  `json:"lines"`
}

// entry is one call being replayed.
type entry struct {
	out  *Replayed
	mod  int
	cand *Candidate // nil when it cannot be made here
	runs [2]*Outcome
	// The test body asserting what it did ("" when none).
	body string
}

// replayer holds one replay.
type replayer struct {
	req     *Request
	m       *Module
	result  *ReplayResult
	entries [][]*entry // by module, in the order asked
	timeout time.Duration
}

// replay answers a replay request; problems become the answer's entries, never a failure.
func replay(req *Request) (result *ReplayResult) {
	rp := newReplayer(req)
	defer func() {
		if r := recover(); r != nil {
			logf("the replay failed: %v\n%s", r, stack())
			rp.failAll(fmt.Sprintf("the replay failed: %v", r))
			result = rp.result
		}
	}()
	if err := os.MkdirAll(req.Work, 0o755); err != nil {
		rp.failAll(err.Error())
		return rp.result
	}
	m, err := load(rp.loadRequest())
	if err != nil {
		rp.failAll(err.Error())
		return rp.result
	}
	rp.m = m
	byPkg := rp.resolveAll()
	for _, pkg := range m.Pkgs {
		if es := byPkg[pkg]; len(es) > 0 {
			rp.runGuarded(pkg, es)
		}
	}
	rp.writeSources()
	return rp.result
}

// newReplayer makes every module's entries, in the order asked, with their names.
func newReplayer(req *Request) *replayer {
	if req.Go == "" {
		req.Go = "go"
	}
	body := req.Replay
	timeout := time.Duration(body.CallTimeoutS * float64(time.Second))
	if timeout < time.Second {
		timeout = time.Second
	}
	rp := &replayer{req: req, result: &ReplayResult{Modules: []ReplayedModule{}}, timeout: timeout}
	// Test names are unique in a folder (a package): a second module's clash gets its number.
	used := map[string]bool{}
	for i, rm := range body.Modules {
		mod := ReplayedModule{Module: rm.Module, TestFile: testFileName(body.Layer, rm.File), Replayed: []Replayed{}}
		var es []*entry
		for k, call := range rm.Calls {
			name := replayName(call.Function, k)
			for n := 1; used[filepath.Dir(rm.File)+"/"+name]; n++ {
				name = fmt.Sprintf("%s_M%d_%d", replayName(call.Function, k), i+1, n)
			}
			used[filepath.Dir(rm.File)+"/"+name] = true
			mod.Replayed = append(mod.Replayed, Replayed{Function: call.Function, Expr: call.Expr,
				Test: call.Test, Name: name})
		}
		// The entries point into the slice the result holds (appending mod copies only its
		// header).
		for k := range mod.Replayed {
			es = append(es, &entry{out: &mod.Replayed[k], mod: i})
		}
		rp.result.Modules = append(rp.result.Modules, mod)
		rp.entries = append(rp.entries, es)
	}
	return rp
}

// replayName is a call's test: its function and its place in the list, the same on every
// version ("pricing.Basket.Add", 2 -> TestReplay_Basket_Add_3).
func replayName(function string, index int) string {
	name := function
	if i := strings.Index(name, "."); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		b.WriteString("Call")
	}
	return "TestReplay_" + b.String() + "_" + strconv.Itoa(index+1)
}

// loadRequest is the request load reads: the replay's modules, every function of their
// packages.
func (rp *replayer) loadRequest() *Request {
	body := rp.req.Replay
	lr := &Request{Layer: body.Layer, Seed: body.Seed, CallTimeoutS: body.CallTimeoutS, Go: rp.req.Go,
		ModulePath: rp.req.ModulePath, Work: rp.req.Work, everyFile: true}
	for _, rm := range body.Modules {
		lr.Modules = append(lr.Modules, ModuleRef{Module: rm.Module, File: rm.File})
	}
	return lr
}

// failAll marks every module as not loading.
func (rp *replayer) failAll(why string) {
	for i := range rp.result.Modules {
		rp.moduleError(i, why)
	}
}

// moduleError marks a module as not loading: its entries are all missing.
func (rp *replayer) moduleError(i int, why string) {
	mod := &rp.result.Modules[i]
	if mod.ImportError == nil {
		mod.ImportError = &why
	}
	for _, e := range rp.entries[i] {
		e.cand, e.body = nil, ""
		e.out.Missing, e.out.Stable, e.out.Body, e.out.Raised = true, false, nil, false
		e.out.Shown = "missing: " + why
	}
}

// missing marks an entry whose call cannot be made here.
func missing(e *entry, why string) {
	e.cand = nil
	e.out.Missing, e.out.Stable, e.out.Body = true, false, nil
	e.out.Shown = "missing: " + why
}

// resolveAll makes every entry's candidate here; it returns the entries by package.
func (rp *replayer) resolveAll() map[*Pkg][]*entry {
	byPkg := map[*Pkg][]*entry{}
	ids := map[*Pkg]int{}
	for i, rm := range rp.req.Replay.Modules {
		pkg, why := rp.pkgOf(rm.File)
		if pkg == nil {
			rp.moduleError(i, why)
			continue
		}
		for k, e := range rp.entries[i] {
			c, fn, why := rp.resolve(pkg, rm.Calls[k])
			if fn != nil {
				describe(e.out, fn)
			}
			if c == nil {
				missing(e, why)
				continue
			}
			ids[pkg]++
			c.ID = ids[pkg]
			e.cand = c
			byPkg[pkg] = append(byPkg[pkg], e)
		}
	}
	return byPkg
}

// describe records the called function's doc comment and lines in this version.
func describe(out *Replayed, fn *Callable) {
	if fn.Doc != "" {
		doc := fn.Doc
		out.Doc = &doc
	}
	out.Lines = &[2]int{fn.Line, fn.End}
}

// pkgOf is the loaded package of a module-relative file, or why there is none.
func (rp *replayer) pkgOf(file string) (*Pkg, string) {
	dir := filepath.ToSlash(filepath.Dir(file))
	if dir == "." {
		dir = ""
	}
	for _, pkg := range rp.m.Pkgs {
		if pkg.Dir == dir {
			return pkg, ""
		}
	}
	importPath := strings.TrimSuffix(rp.m.Path+"/"+dir, "/")
	for _, l := range rp.m.LeftOut {
		if strings.HasPrefix(l, importPath+": ") || (dir != "" && strings.HasPrefix(l, dir+": ")) {
			return nil, l
		}
	}
	return nil, importPath + ": the package did not load"
}

// resolve makes a call's candidate in this version's package by the names of its functions;
// it returns the called function when it exists here, and why the call cannot be made.
func (rp *replayer) resolve(pkg *Pkg, call Call) (*Candidate, *Callable, string) {
	var n NativeCall
	if len(call.Native) == 0 || json.Unmarshal(call.Native, &n) != nil || len(n.Steps) == 0 {
		return nil, nil, "the call has no native form to make it from"
	}
	if n.Pkg != pkg.ImportPath || n.Alias != pkg.Alias {
		return nil, nil, fmt.Sprintf("it calls package %s (as %s), the file's is %s (as %s)",
			n.Pkg, n.Alias, pkg.ImportPath, pkg.Alias)
	}
	c := &Candidate{Pkg: pkg, Recv: n.Recv}
	var fn *Callable
	for _, st := range n.Steps {
		name := st.Func
		if st.Type != "" {
			name = st.Type + "." + st.Func
		}
		fn = rp.callable(pkg, name)
		if fn == nil {
			return nil, nil, rp.goneWhy(pkg, name)
		}
		c.Steps = append(c.Steps, Step{C: fn, Args: st.Args})
	}
	if why := fits(c); why != "" {
		return nil, fn, why
	}
	if why := rp.addImports(n.Imports); why != "" {
		return nil, fn, why
	}
	return c, fn, ""
}

// callable is the package's callable of a name ("TotalPrice", "Basket.Add").
func (rp *replayer) callable(pkg *Pkg, name string) *Callable {
	for _, c := range rp.m.Callables {
		if c.Pkg == pkg && c.Name == name {
			return c
		}
	}
	return nil
}

// goneWhy is why a function cannot be called here: what load left out about it, or that it
// does not exist.
func (rp *replayer) goneWhy(pkg *Pkg, name string) string {
	for _, l := range rp.m.LeftOut {
		if strings.HasPrefix(l, pkg.Alias+"."+name+": ") {
			return l
		}
	}
	return pkg.Name + "." + name + " does not exist here"
}

// fits says why a candidate's steps cannot take its values here ("" when they can): the
// number of arguments, and methods on `v` exactly when there is a value.
func fits(c *Candidate) string {
	for _, st := range c.Steps {
		if len(st.Args) != st.C.Sig.Params().Len() {
			return fmt.Sprintf("%s takes %d arguments here, the call gives %d", functionName(st.C),
				st.C.Sig.Params().Len(), len(st.Args))
		}
		if (st.C.Recv != nil) != (c.Recv != nil) {
			return functionName(st.C) + " is a method in one version and a function in the other"
		}
	}
	return ""
}

// addImports makes the qualifiers a call's values use known; one that names another package
// here cannot be used.
func (rp *replayer) addImports(imports map[string]string) string {
	for name, path := range imports {
		if have, ok := rp.m.Imports[name]; ok && have != path {
			return fmt.Sprintf("%s names %s here, the call's values mean %s", name, have, path)
		}
	}
	for name, path := range imports {
		rp.m.Imports[name] = path
	}
	return ""
}

// stack is the running goroutine's stack, for a failure's report.
func stack() string {
	buf := make([]byte, 1<<16)
	return string(buf[:runtime.Stack(buf, false)])
}

// runGuarded runs a package's calls; a failure of the replay itself is its modules' problem,
// not the other packages'.
func (rp *replayer) runGuarded(pkg *Pkg, es []*entry) {
	defer func() {
		if r := recover(); r != nil {
			logf("the replay of %s failed: %v\n%s", pkg.ImportPath, r, stack())
			rp.packageError(es, fmt.Sprintf("the replay failed: %v", r))
		}
	}()
	rp.runPackage(pkg, es)
}

// runPackage builds one package's calls into one harness and runs each twice.
func (rp *replayer) runPackage(pkg *Pkg, es []*entry) {
	probe := &Probe{m: rp.m, pkg: pkg, layer: "replay", work: rp.req.Work, timeout: rp.timeout,
		compileErrors: map[string]string{}, dropped: map[int]string{}}
	var cands []*Candidate
	for _, e := range es {
		cands = append(cands, e.cand)
	}
	built, bin, err := probe.build(cands)
	if err != nil && len(probe.dropped) < len(cands) {
		rp.packageError(es, err.Error())
		return
	}
	ok := map[*Candidate]bool{}
	for _, c := range built {
		ok[c] = true
	}
	var live []*entry
	for _, e := range es {
		if ok[e.cand] {
			live = append(live, e)
			continue
		}
		missing(e, "does not compile here: "+probe.dropped[e.cand.ID])
	}
	if len(live) == 0 {
		return // none compiles: nothing was built
	}
	if o := probe.runOne(bin, 0); len(o.Effects) > 0 {
		for _, e := range live {
			unstable(e, "its package's test setup changes "+strings.Join(o.Effects, ", "))
		}
		return
	}
	for pass, todo := 0, live; pass < 2; pass++ {
		outcomes := runAll(probe, bin, todo)
		var again []*entry
		for i, e := range todo {
			e.runs[pass] = outcomes[i]
			// A run that stopped or had effects says enough: it is not run again.
			if trouble(outcomes[i]) == "" {
				again = append(again, e)
			}
		}
		todo = again
	}
	r := &Renderer{m: rp.m, pkg: pkg, vals: newValues(rp.m, pkg), work: rp.req.Work}
	for _, e := range live {
		judgeReplay(r, e)
	}
	_ = os.Remove(bin)
}

// packageError marks the modules of a package whose harness did not build.
func (rp *replayer) packageError(es []*entry, why string) {
	done := map[int]bool{}
	for _, e := range es {
		if !done[e.mod] {
			done[e.mod] = true
			rp.moduleError(e.mod, why)
		}
	}
}

// unstable marks an entry whose runs cannot be asserted.
func unstable(e *entry, why string) {
	e.out.Stable, e.out.Body, e.body = false, nil, ""
	e.out.Shown = why
}

// runAll runs each entry's candidate once, as many at a time as there are processors; a run
// that left something behind runs again alone (what it saw may be another run's).
func runAll(p *Probe, bin string, es []*entry) []*Outcome {
	out := make([]*Outcome, len(es))
	var running sync.RWMutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				running.RLock()
				o := p.runOne(bin, es[i].cand.ID)
				running.RUnlock()
				if len(o.Effects) > 0 {
					running.Lock()
					o = p.runOne(bin, es[i].cand.ID)
					running.Unlock()
				}
				out[i] = o
			}
		}()
	}
	for i := range es {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// judgeReplay reads an entry's two runs: what it did, whether both runs agree, and the body
// asserting it.
func judgeReplay(r *Renderer, e *entry) {
	c, first, second := e.cand, e.runs[0], e.runs[1]
	// The second run is missing only when the first had trouble.
	for _, o := range e.runs {
		if o == nil {
			continue
		}
		if why := trouble(o); why != "" {
			unstable(e, clip(why, 200))
			return
		}
	}
	e.out.Shown = shownOf(c, first)
	e.out.Raised = raisedIn(c, first)
	if outcomeKey(first) != outcomeKey(second) {
		again := shownOf(c, second)
		if again == e.out.Shown {
			again = "something else"
		}
		unstable(e, clip("unstable: "+e.out.Shown+", then "+again, 200))
		return
	}
	e.out.Stable = true
	if body, ok := r.replayBody(c, first); ok && parses(body) {
		e.body = body
	}
}

// parses says whether a body is Go syntax as a function's: one that is not would spoil its
// whole file.
func parses(body string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\nfunc f() {\n"+body+"}\n", 0)
	return err == nil
}

// trouble is why a run says nothing of the call: it stopped, had effects, or the sandbox
// refused it.
func trouble(o *Outcome) string {
	switch {
	case o.Stopped != "":
		return o.Stopped
	case len(o.Effects) > 0:
		return "changes " + strings.Join(o.Effects, ", ")
	case deniedBySandbox(o):
		return "the sandbox refused it: " + deniedText(o)
	}
	return ""
}

// outcomeKey is what a run observed, addresses left out: two runs agree when their keys do.
func outcomeKey(o *Outcome) string {
	mask := func(s string) string { return addressRe.ReplaceAllString(s, "0x?") }
	maskAll := func(obs []Obs) []Obs {
		out := make([]Obs, len(obs))
		for i, x := range obs {
			out[i] = Obs{Go: mask(x.Go), Text: mask(x.Text), IsNil: x.IsNil}
			if x.ErrText != nil {
				t := mask(*x.ErrText)
				out[i].ErrText = &t
			}
		}
		return out
	}
	key := struct {
		Panic   string
		Step    int
		Results [][]Obs
		Post    []Obs
	}{Panic: mask(o.Panic_()), Post: maskAll(o.Post)}
	if o.Panic != nil {
		key.Step = o.Step
	}
	for _, rs := range o.Results {
		key.Results = append(key.Results, maskAll(rs))
	}
	b, _ := json.Marshal(key)
	return string(b)
}

// writeSources writes each module's test file from the bodies that pass on this version.
func (rp *replayer) writeSources() {
	byPkg := map[*Pkg][]int{}
	var pkgs []*Pkg
	for i, rm := range rp.req.Replay.Modules {
		if rp.result.Modules[i].ImportError != nil {
			continue
		}
		pkg, _ := rp.pkgOf(rm.File)
		if pkg == nil {
			continue
		}
		if _, seen := byPkg[pkg]; !seen {
			pkgs = append(pkgs, pkg)
		}
		byPkg[pkg] = append(byPkg[pkg], i)
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	for _, pkg := range pkgs {
		rp.verify(pkg, byPkg[pkg])
	}
}
