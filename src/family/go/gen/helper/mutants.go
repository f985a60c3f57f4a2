package main

// Mutants: the "mutants" mode lists every mutation point of the files it is given, as byte
// ranges and their replacements, so that team-testing applies one at a time and runs the
// package's tests. The mutators are those of gremlins and go-mutesting. Types sharpen them
// (string +, zero values, names a removal would leave unused) but are never required: the
// standard library is type-checked from source and every other import is an empty stand-in,
// so no dependency has to be found, downloaded or built.

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// MutationPoint is one mutant: the file becomes text[:Start] + Replacement + text[End:].
type MutationPoint struct {
	Line        int    `json:"line"`
	Start       int    `json:"start"`
	End         int    `json:"end"`
	Replacement string `json:"replacement"`
	Operator    string `json:"operator"`
}

// MutantsResult is what the "mutants" mode prints: the points of every requested file (an
// empty list for a generated or unreadable one) and what could not be read or parsed.
type MutantsResult struct {
	Points   map[string][]MutationPoint `json:"points"`
	Problems []string                   `json:"problems"`
}

// mutFile is one requested source file.
type mutFile struct {
	path string
	src  []byte
	ast  *ast.File
}

// mutantsResult parses the files, type-checks each package they belong to, and lists points.
func mutantsResult(paths []string) *MutantsResult {
	result := &MutantsResult{Points: map[string][]MutationPoint{}, Problems: []string{}}
	fset := token.NewFileSet()
	groups := map[string][]*mutFile{}
	var keys []string
	for _, path := range paths {
		if _, seen := result.Points[path]; seen {
			continue
		}
		result.Points[path] = []MutationPoint{}
		src, err := os.ReadFile(path)
		if err != nil {
			result.Problems = append(result.Problems, fmt.Sprintf("cannot read %s: %v", path, err))
			continue
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			result.Problems = append(result.Problems, fmt.Sprintf("cannot parse %s: %v", path, err))
			continue
		}
		// Files of one package are type-checked together.
		key := filepath.Dir(path) + "\x00" + f.Name.Name
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], &mutFile{path: path, src: src, ast: f})
	}
	imp := newMutImporter(fset)
	for _, key := range keys {
		pkg := mutCheck(fset, imp, groups[key])
		for _, f := range groups[key] {
			if !mutGenerated(f.ast) {
				result.Points[f.path] = pkg.points(f)
			}
		}
	}
	return result
}

// mutGeneratedRe is Go's convention for generated files: mutating them tests the generator.
var mutGeneratedRe = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// mutGenerated says whether a generated-code comment stands before the package clause.
func mutGenerated(f *ast.File) bool {
	for _, group := range f.Comments {
		if group.Pos() >= f.Package {
			break
		}
		for _, c := range group.List {
			if mutGeneratedRe.MatchString(c.Text) {
				return true
			}
		}
	}
	return false
}

// mutImporter type-checks the standard library from source and stands an empty package in for
// anything else, or for a standard package that fails: its names then have no type, which
// only makes the mutators fall back to syntax.
type mutImporter struct {
	// The platform's own build context, to choose the package's files as go test does.
	platform build.Context
	goroot   string
	source   types.ImporterFrom
	fakes    map[string]*types.Package
}

// newMutImporter builds the source importer without cgo: cgo would run the C toolchain for
// packages such as net, and the pure Go files give the same API.
func newMutImporter(fset *token.FileSet) *mutImporter {
	platform := build.Default
	build.Default.CgoEnabled = false
	source, _ := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	return &mutImporter{
		platform: platform,
		goroot:   build.Default.GOROOT,
		source:   source,
		fakes:    map[string]*types.Package{},
	}
}

func (m *mutImporter) Import(path string) (*types.Package, error) {
	return m.ImportFrom(path, "", 0)
}

func (m *mutImporter) ImportFrom(path, dir string, _ types.ImportMode) (*types.Package, error) {
	if fake := m.fakes[path]; fake != nil {
		return fake, nil
	}
	if m.standard(path) {
		if pkg := m.fromSource(path, dir); pkg != nil {
			return pkg, nil
		}
	}
	fake := types.NewPackage(path, mutPackageName(path))
	fake.MarkComplete()
	m.fakes[path] = fake
	return fake, nil
}

// standard says whether path is a package of GOROOT: only those are read from source.
func (m *mutImporter) standard(path string) bool {
	if m.source == nil || m.goroot == "" || path == "C" {
		return false
	}
	info, err := os.Stat(filepath.Join(m.goroot, "src", filepath.FromSlash(path)))
	return err == nil && info.IsDir()
}

// fromSource imports a standard package, or gives nil when that fails in any way.
func (m *mutImporter) fromSource(path, dir string) (pkg *types.Package) {
	defer func() {
		if recover() != nil {
			pkg = nil
		}
	}()
	pkg, err := m.source.ImportFrom(path, dir, 0)
	if err != nil {
		return nil
	}
	return pkg
}

// mutMajorRe and mutVersionRe match the versions in import paths: "/v2", "yaml.v3".
var (
	mutMajorRe   = regexp.MustCompile(`^v[0-9]+$`)
	mutVersionRe = regexp.MustCompile(`\.v[0-9]+$`)
)

// mutPackageName guesses the name an unloaded package declares, so that its selectors still
// resolve to the import (which tells when a removal would leave the import unused).
func mutPackageName(path string) string {
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && mutMajorRe.MatchString(name) {
		name = parts[len(parts)-2]
	}
	name = mutVersionRe.ReplaceAllString(name, "")
	name = strings.TrimPrefix(name, "go-")
	return strings.NewReplacer("-", "", ".", "").Replace(name)
}

// mutPackage is one type-checked package: what the mutators ask of types.
type mutPackage struct {
	fset   *token.FileSet
	pkg    *types.Package
	info   *types.Info
	uses   map[types.Object]int
	params map[types.Object]bool
	// Identifiers only assigned to, which the compiler does not count as uses.
	writes map[*ast.Ident]bool
}

// mutCheck type-checks the requested files with the package's other files of this platform,
// ignoring every error: what resolves is used, the rest falls back to syntax.
func mutCheck(fset *token.FileSet, imp *mutImporter, requested []*mutFile) *mutPackage {
	files := []*ast.File{}
	given := map[string]bool{}
	for _, f := range requested {
		files = append(files, f.ast)
		given[filepath.Clean(f.path)] = true
	}
	dir := filepath.Dir(requested[0].path)
	files = append(files, mutSiblings(fset, &imp.platform, dir, requested[0].ast.Name.Name, given)...)
	p := &mutPackage{
		fset: fset,
		info: &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{},
			Defs:  map[*ast.Ident]types.Object{},
			Uses:  map[*ast.Ident]types.Object{},
		},
		uses:   map[types.Object]int{},
		params: map[types.Object]bool{},
		writes: map[*ast.Ident]bool{},
	}
	conf := types.Config{Importer: imp, Error: func(error) {}, FakeImportC: true}
	func() {
		defer func() { _ = recover() }()
		p.pkg, _ = conf.Check("ttgen.mutants/"+filepath.ToSlash(dir), fset, files, p.info)
	}()
	for _, f := range files {
		p.collectParams(f)
		p.collectWrites(f)
	}
	for id, obj := range p.info.Uses {
		if !p.writes[id] {
			p.uses[obj]++
		}
	}
	return p
}

// mutSiblings parses the package's other non-test files that build on this platform.
func mutSiblings(fset *token.FileSet, ctxt *build.Context, dir, name string, given map[string]bool) []*ast.File {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var files []*ast.File
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || given[path] {
			continue
		}
		if ok, err := ctxt.MatchFile(dir, e.Name()); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err == nil && f.Name.Name == name {
			files = append(files, f)
		}
	}
	return files
}

// collectParams notes parameters, receivers and results: unlike other variables they may go
// unused.
func (p *mutPackage) collectParams(f *ast.File) {
	add := func(fields *ast.FieldList) {
		if fields == nil {
			return
		}
		for _, field := range fields.List {
			for _, name := range field.Names {
				if obj := p.info.Defs[name]; obj != nil {
					p.params[obj] = true
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Recv)
		case *ast.FuncType:
			add(n.Params)
			add(n.Results)
		}
		return true
	})
}

// collectWrites notes the variables assigned to by name (x = 1, x += 1, x++): the compiler
// counts none of these as a use of x.
func (p *mutPackage) collectWrites(f *ast.File) {
	add := func(e ast.Expr) {
		if id, ok := mutUnparen(e).(*ast.Ident); ok {
			p.writes[id] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, lhs := range n.Lhs {
					add(lhs)
				}
			}
		case *ast.IncDecStmt:
			add(n.X)
		}
		return true
	})
}

// mustUse says whether the compiler rejects obj unused: an import or a local variable.
func (p *mutPackage) mustUse(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.PkgName:
		return true
	case *types.Var:
		scope := o.Parent()
		return !o.IsField() && !p.params[o] && scope != nil && scope != types.Universe &&
			(p.pkg == nil || scope != p.pkg.Scope())
	}
	return false
}

// points lists a file's mutation points in source order, without duplicates.
func (p *mutPackage) points(f *mutFile) []MutationPoint {
	w := &mutWalker{mutPackage: p, src: f.src}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		if n == nil {
			w.stack = w.stack[:len(w.stack)-1]
			return false
		}
		if !w.visit(n) {
			return false
		}
		w.stack = append(w.stack, n)
		return true
	})
	sort.SliceStable(w.points, func(i, j int) bool {
		a, b := w.points[i], w.points[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End < b.End
	})
	out := []MutationPoint{}
	seen := map[[2]int]map[string]bool{}
	for _, pt := range w.points {
		key := [2]int{pt.Start, pt.End}
		if seen[key] == nil {
			seen[key] = map[string]bool{}
		}
		if !seen[key][pt.Replacement] {
			seen[key][pt.Replacement] = true
			out = append(out, pt)
		}
	}
	return out
}

// mutWalker walks one file, with the stack of nodes above the current one.
type mutWalker struct {
	*mutPackage
	src    []byte
	stack  []ast.Node
	points []MutationPoint
}

// mutBinary are the replacements of each binary operator: arithmetic, boundary and negated
// comparisons, and the boolean operators.
var mutBinary = map[token.Token][]token.Token{
	token.ADD: {token.SUB}, token.SUB: {token.ADD},
	token.MUL: {token.QUO}, token.QUO: {token.MUL}, token.REM: {token.MUL},
	token.LSS: {token.LEQ, token.GEQ}, token.LEQ: {token.LSS, token.GTR},
	token.GTR: {token.GEQ, token.LEQ}, token.GEQ: {token.GTR, token.LSS},
	token.EQL: {token.NEQ}, token.NEQ: {token.EQL},
	token.LAND: {token.LOR}, token.LOR: {token.LAND},
}

// mutAssign are the replacements of the arithmetic assignment operators.
var mutAssign = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
}

// visit adds the points of one node, and says whether to go into it: constants, types
// (array lengths, struct tags) and imports are never mutated.
func (w *mutWalker) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GenDecl:
		return n.Tok == token.VAR
	case *ast.ArrayType, *ast.StructType, *ast.InterfaceType, *ast.FuncType, *ast.MapType, *ast.ChanType:
		return false
	case *ast.BinaryExpr:
		w.binary(n)
	case *ast.UnaryExpr:
		w.unary(n)
	case *ast.AssignStmt:
		w.assign(n)
	case *ast.IncDecStmt:
		other := map[token.Token]token.Token{token.INC: token.DEC, token.DEC: token.INC}[n.Tok]
		w.swap(n.TokPos, n.Tok, other)
		w.remove(n)
	case *ast.BranchStmt:
		w.branch(n)
	case *ast.ReturnStmt:
		w.returnZero(n)
	case *ast.IfStmt:
		w.ifCond(n)
	case *ast.ExprStmt:
		if call, ok := n.X.(*ast.CallExpr); ok && !w.panics(call) {
			w.remove(n)
		}
	}
	return true
}

// add records the replacement of the bytes from..to.
func (w *mutWalker) add(from, to token.Pos, replacement, operator string) {
	start := w.fset.PositionFor(from, false)
	w.points = append(w.points, MutationPoint{
		Line:        start.Line,
		Start:       start.Offset,
		End:         w.fset.PositionFor(to, false).Offset,
		Replacement: replacement,
		Operator:    operator,
	})
}

// swap replaces the operator token at pos.
func (w *mutWalker) swap(pos token.Pos, from, to token.Token) {
	w.add(pos, pos+token.Pos(len(from.String())), to.String(), from.String()+" → "+to.String())
}

// text is a node's source.
func (w *mutWalker) text(n ast.Node) string {
	return string(w.src[w.fset.PositionFor(n.Pos(), false).Offset:w.fset.PositionFor(n.End(), false).Offset])
}

func (w *mutWalker) binary(n *ast.BinaryExpr) {
	for _, to := range mutBinary[n.Op] {
		if n.Op == token.ADD && w.concatenates(n, n.X, n.Y) {
			continue
		}
		if to == token.QUO && w.zeroConst(n.Y) {
			continue
		}
		if !w.vetClean(n, to) {
			continue
		}
		w.swap(n.OpPos, n.Op, to)
	}
}

// vetClean says whether go vet's bools check, which go test runs, still passes once n's
// operator is to: `x == a && x == b`, `x != a || x != b` and `e || e` fail it.
func (w *mutWalker) vetClean(n *ast.BinaryExpr, to token.Token) bool {
	var top ast.Expr = n
	for i := len(w.stack) - 1; i >= 0; i-- {
		e, ok := w.stack[i].(ast.Expr)
		if !ok {
			break
		}
		top = e
	}
	from := n.Op
	n.Op = to
	defer func() { n.Op = from }()
	clean := true
	ast.Inspect(top, func(x ast.Node) bool {
		if b, ok := x.(*ast.BinaryExpr); ok && (b.Op == token.LAND || b.Op == token.LOR) {
			clean = clean && w.boolsClean(b)
		}
		return clean
	})
	return clean
}

// boolsClean checks one && or || chain as vet does: among the operands between two with side
// effects, none twice, and no x compared with two constants by == under && or != under ||.
func (w *mutWalker) boolsClean(b *ast.BinaryExpr) bool {
	bad := map[token.Token]token.Token{token.LAND: token.EQL, token.LOR: token.NEQ}[b.Op]
	seen, compared := map[string]bool{}, map[string]bool{}
	for _, e := range mutSplit(b, b.Op) {
		if w.sideEffects(e) {
			seen, compared = map[string]bool{}, map[string]bool{}
			continue
		}
		text := types.ExprString(e)
		if seen[text] {
			return false
		}
		seen[text] = true
		cmp, ok := e.(*ast.BinaryExpr)
		if !ok || cmp.Op != bad {
			continue
		}
		x := cmp.Y
		if w.constant(cmp.Y) {
			x = cmp.X
		} else if !w.constant(cmp.X) {
			continue
		}
		if compared[types.ExprString(x)] {
			return false
		}
		compared[types.ExprString(x)] = true
	}
	return true
}

// mutSplit lists the operands of a chain of op, parentheses removed.
func mutSplit(e ast.Expr, op token.Token) []ast.Expr {
	e = mutUnparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == op {
		return append(mutSplit(b.X, op), mutSplit(b.Y, op)...)
	}
	return []ast.Expr{e}
}

// mutUnparen removes the parentheses around an expression.
func mutUnparen(e ast.Expr) ast.Expr {
	for {
		paren, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = paren.X
	}
}

// constant says whether an expression is a constant.
func (w *mutWalker) constant(e ast.Expr) bool {
	if w.info.Types[e].Value != nil {
		return true
	}
	_, lit := mutUnparen(e).(*ast.BasicLit)
	return lit
}

// sideEffects says, as vet does, whether an expression calls a function or receives.
func (w *mutWalker) sideEffects(e ast.Expr) bool {
	effects := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			effects = effects || !w.info.Types[n.Fun].IsType()
		case *ast.UnaryExpr:
			effects = effects || n.Op == token.ARROW
		}
		return !effects
	})
	return effects
}

func (w *mutWalker) assign(n *ast.AssignStmt) {
	if to, ok := mutAssign[n.Tok]; ok && len(n.Lhs) == 1 && len(n.Rhs) == 1 {
		skip := (n.Tok == token.ADD_ASSIGN && w.concatenates(n.Lhs[0], n.Rhs[0])) ||
			(to == token.QUO_ASSIGN && w.zeroConst(n.Rhs[0]))
		if !skip {
			w.swap(n.TokPos, n.Tok, to)
		}
	}
	if n.Tok != token.DEFINE {
		w.remove(n)
	}
}

// unary deletes a negation: !x becomes x, -x becomes x.
func (w *mutWalker) unary(n *ast.UnaryExpr) {
	switch n.Op {
	case token.NOT:
		w.add(n.OpPos, n.OpPos+1, "", "! removed")
	case token.SUB:
		w.add(n.OpPos, n.OpPos+1, "", "unary - removed")
	}
}

// branch swaps break and continue: an unlabelled break only inside a for loop of the same
// function, where continue is legal.
func (w *mutWalker) branch(n *ast.BranchStmt) {
	if n.Label != nil {
		return
	}
	switch {
	case n.Tok == token.CONTINUE:
		w.swap(n.TokPos, token.CONTINUE, token.BREAK)
	case n.Tok == token.BREAK && w.inLoop():
		w.swap(n.TokPos, token.BREAK, token.CONTINUE)
	}
}

// inLoop says whether a for loop of the current function encloses the node.
func (w *mutWalker) inLoop() bool {
	for i := len(w.stack) - 1; i >= 0; i-- {
		switch w.stack[i].(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return true
		case *ast.FuncLit, *ast.FuncDecl:
			return false
		}
	}
	return false
}

// funcType is the signature of the function the node is in.
func (w *mutWalker) funcType() *ast.FuncType {
	for i := len(w.stack) - 1; i >= 0; i-- {
		switch f := w.stack[i].(type) {
		case *ast.FuncLit:
			return f.Type
		case *ast.FuncDecl:
			return f.Type
		}
	}
	return nil
}

// ifCond replaces a condition by true and by false; when that would leave a variable or an
// import unused, by `true || (cond)` and `false && (cond)`, which keep its names.
func (w *mutWalker) ifCond(n *ast.IfStmt) {
	cond := w.text(n.Cond)
	locals, imports := w.orphans(n.Cond)
	for _, value := range []string{"true", "false"} {
		if cond == value {
			continue
		}
		replacement := value
		if len(locals) > 0 || imports {
			kept := cond
			if _, ok := n.Cond.(*ast.BinaryExpr); ok {
				kept = "(" + cond + ")"
			}
			replacement = map[string]string{"true": "true || ", "false": "false && "}[value] + kept
		}
		w.add(n.Cond.Pos(), n.Cond.End(), replacement, "if → "+value)
	}
}

// returnZero makes a return give the zero values of the results, unless it already does,
// is naked, or would leave an import unused; local variables it would leave unused are kept
// by a `_ = v;` before it.
func (w *mutWalker) returnZero(n *ast.ReturnStmt) {
	ft := w.funcType()
	if ft == nil || ft.Results == nil || len(n.Results) == 0 {
		return
	}
	var zeros []string
	for _, field := range ft.Results.List {
		zero := w.zeroOf(field.Type)
		for i := 0; i < len(field.Names) || (i == 0 && len(field.Names) == 0); i++ {
			zeros = append(zeros, zero)
		}
	}
	if len(n.Results) != len(zeros) && len(n.Results) != 1 {
		return
	}
	if len(n.Results) == len(zeros) && w.allZero(n.Results, zeros) {
		return
	}
	nodes := make([]ast.Node, len(n.Results))
	for i, r := range n.Results {
		nodes[i] = r
	}
	locals, imports := w.orphans(nodes...)
	if imports {
		return
	}
	values := strings.Join(zeros, ", ")
	if len(locals) > 0 {
		w.add(n.Pos(), n.End(), mutKeep(locals)+"; return "+values, "return zero values")
		return
	}
	w.add(n.Results[0].Pos(), n.Results[len(n.Results)-1].End(), values, "return zero values")
}

// allZero says whether every value already is its result's zero.
func (w *mutWalker) allZero(values []ast.Expr, zeros []string) bool {
	for i, v := range values {
		if !w.isZero(v, zeros[i]) {
			return false
		}
	}
	return true
}

// isZero says whether v is the zero value written zero.
func (w *mutWalker) isZero(v ast.Expr, zero string) bool {
	tv, known := w.info.Types[v]
	if known && tv.IsNil() {
		return true
	}
	text := w.text(v)
	if zero == "nil" {
		return text == "nil"
	}
	if known && tv.Value != nil {
		return mutZeroValue(tv.Value)
	}
	if lit, ok := v.(*ast.CompositeLit); ok && len(lit.Elts) == 0 && strings.HasSuffix(zero, "{}") {
		return true
	}
	switch text {
	case "0", "false", `""`, "``":
		return true
	}
	return text == zero
}

// mutZeroValue says whether a constant is its kind's zero.
func mutZeroValue(v constant.Value) bool {
	switch v.Kind() {
	case constant.Bool:
		return !constant.BoolVal(v)
	case constant.String:
		return constant.StringVal(v) == ""
	case constant.Int, constant.Float, constant.Complex:
		return constant.Sign(v) == 0
	}
	return false
}

// zeroOf writes the zero value of a result type: from its type when known, else from its
// syntax; `*new(T)` is the zero of any type whose form is not known.
func (w *mutWalker) zeroOf(typ ast.Expr) string {
	text := w.text(typ)
	if t := w.typeOf(typ); t != nil {
		if zero := mutZeroFor(t, text); zero != "" {
			return zero
		}
	}
	switch t := typ.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string":
			return `""`
		case "bool":
			return "false"
		case "error", "any":
			return "nil"
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "float32", "float64", "complex64", "complex128", "byte", "rune":
			return "0"
		}
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return "nil"
	case *ast.ArrayType:
		if t.Len == nil {
			return "nil"
		}
		return text + "{}"
	case *ast.StructType:
		return text + "{}"
	}
	return "*new(" + text + ")"
}

// mutZeroFor writes the zero of a known type, or "" when the type did not resolve.
func mutZeroFor(t types.Type, text string) string {
	if _, ok := t.(*types.TypeParam); ok {
		return "*new(" + text + ")"
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.Invalid:
			return ""
		case u.Info()&types.IsBoolean != 0:
			return "false"
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Info()&types.IsNumeric != 0:
			return "0"
		}
		return "nil"
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return "nil"
	case *types.Struct, *types.Array:
		return text + "{}"
	}
	return ""
}

// typeOf is an expression's type, or nil when it did not resolve.
func (w *mutWalker) typeOf(e ast.Expr) types.Type {
	t := w.info.Types[e].Type
	if t == nil {
		return nil
	}
	if b, ok := t.Underlying().(*types.Basic); ok && b.Kind() == types.Invalid {
		return nil
	}
	return t
}

// concatenates says whether a + joins strings, which - never compiles for: by the first
// operand whose type resolved, else by a string literal or a String() or Error() call.
func (w *mutWalker) concatenates(exprs ...ast.Expr) bool {
	for _, e := range exprs {
		if t := w.typeOf(e); t != nil {
			b, ok := t.Underlying().(*types.Basic)
			return ok && b.Info()&types.IsString != 0
		}
	}
	for _, e := range exprs {
		if mutStringSyntax(e) {
			return true
		}
	}
	return false
}

// mutStringSyntax says whether an expression of unknown type looks like a string.
func mutStringSyntax(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return mutStringSyntax(e.X)
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD && (mutStringSyntax(e.X) || mutStringSyntax(e.Y))
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && len(e.Args) == 0 {
			return sel.Sel.Name == "String" || sel.Sel.Name == "Error"
		}
	}
	return false
}

// zeroConst says whether e is the constant zero, which a division by never compiles.
func (w *mutWalker) zeroConst(e ast.Expr) bool {
	if v := w.info.Types[e].Value; v != nil {
		return mutZeroValue(v)
	}
	if lit, ok := e.(*ast.BasicLit); ok {
		return mutZeroValue(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
	}
	return false
}

// panics says whether a call is the built-in panic, which a function may end with: removing
// it would leave a missing return.
func (w *mutWalker) panics(call *ast.CallExpr) bool {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name != "panic" {
		return false
	}
	obj := w.info.Uses[id]
	_, builtin := obj.(*types.Builtin)
	return obj == nil || builtin
}

// remove deletes a statement of a statement list; the local variables whose last use it
// was stay used by `_ = v`, and when it was an import's last use it stays.
func (w *mutWalker) remove(n ast.Stmt) {
	if !w.inList(n) {
		return
	}
	locals, imports := w.orphans(n)
	if imports {
		return
	}
	replacement := ""
	if len(locals) > 0 {
		replacement = mutKeep(locals)
	}
	if replacement != w.text(n) {
		w.add(n.Pos(), n.End(), replacement, "statement removed")
	}
}

// inList says whether the statement stands in a block or a case body, not in the header of
// an if, for or switch (removing a loop's post statement would only make it spin).
func (w *mutWalker) inList(n ast.Stmt) bool {
	if len(w.stack) == 0 {
		return false
	}
	switch parent := w.stack[len(w.stack)-1].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.LabeledStmt:
		return true
	case *ast.CommClause:
		return parent.Comm != n
	}
	return false
}

// orphans lists the local variables whose every use is inside the nodes but whose
// declaration is not, and says whether an import's is: removing the nodes would leave them
// unused, which the compiler rejects.
func (w *mutWalker) orphans(nodes ...ast.Node) (locals []string, imports bool) {
	from, to := nodes[0].Pos(), nodes[len(nodes)-1].End()
	counts := map[types.Object]int{}
	var order []types.Object
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			if obj := w.info.Uses[id]; obj != nil && !w.writes[id] && w.mustUse(obj) {
				if counts[obj] == 0 {
					order = append(order, obj)
				}
				counts[obj]++
			}
			return true
		})
	}
	named := map[string]bool{}
	for _, obj := range order {
		if counts[obj] < w.uses[obj] || (obj.Pos() >= from && obj.Pos() < to) {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			imports = true
		} else if !named[obj.Name()] {
			named[obj.Name()] = true
			locals = append(locals, obj.Name())
		}
	}
	return locals, imports
}

// mutKeep is the statement that keeps variables used: `_, _ = a, b`.
func mutKeep(names []string) string {
	return strings.Repeat("_, ", len(names)-1) + "_ = " + strings.Join(names, ", ")
}
