package main

// Inputs by type, as Go expressions the generated tests can hold: boundaries for numbers, the
// package's own literals, nil and empty for slices, maps and pointers, the package's
// constructors for its types, implementations for interfaces, function literals for function
// parameters, and standard stand-ins for context, readers and writers.

import (
	"fmt"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// Value is one input (in JSON: part of a listed call's native form, for its replay).
type Value struct {
	Expr string `json:"expr"`
	// A word for the case's name ("empty", "nil", "max").
	Tag string `json:"tag,omitempty"`
	// A nil pointer, map, function or interface: a nil dereference it causes is the caller's.
	Nil bool `json:"nil,omitempty"`
	// It names the test's temporary folder (`dir`).
	Temp bool `json:"temp,omitempty"`
	// Written as the underlying type's value: a variable of the named type needs its type
	// spelt (`var v Collection = []*Version{…}`).
	Convert bool `json:"convert,omitempty"`
	// A literal of a type that has constructors: made around them, so a panic it leads to is
	// no defect of the code.
	Bypass bool `json:"bypass,omitempty"`
}

// Values makes inputs for one package's tests.
type Values struct {
	m     *Module
	pkg   *Pkg
	cache map[string][]Value
	// Argument lists each constructor that can fail succeeded with, learnt from the runs.
	good map[*Callable][][]Value
	// Later generations draw from every value constructors made, the first goes through a few.
	wide bool
	// Constructors being expanded (a type whose constructor takes the type itself).
	making map[*types.TypeName]bool
}

func newValues(m *Module, pkg *Pkg) *Values {
	return &Values{m: m, pkg: pkg, cache: map[string][]Value{}, making: map[*types.TypeName]bool{},
		good: map[*Callable][][]Value{}}
}

// qual names packages as the generated file imports them.
func (v *Values) qual(p *types.Package) string {
	if p == v.pkg.Types {
		return v.pkg.Alias
	}
	if _, taken := v.m.Imports[p.Name()]; !taken {
		v.m.Imports[p.Name()] = p.Path()
	}
	return p.Name()
}

func (v *Values) typeString(t types.Type) string { return types.TypeString(t, v.qual) }

// nameable says whether the external test package can write the type.
func (v *Values) nameable(t types.Type) bool {
	seen := map[types.Type]bool{}
	var ok func(t types.Type) bool
	ok = func(t types.Type) bool {
		if seen[t] {
			return true
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Basic:
			return t.Kind() != types.UnsafePointer && t.Info()&types.IsUntyped == 0
		case *types.Named:
			obj := t.Obj()
			if obj.Pkg() == nil {
				return true // error
			}
			if !obj.Exported() || !importable(obj.Pkg().Path(), v.m.Path) {
				return false
			}
			if n := obj.Pkg().Name(); obj.Pkg() != v.pkg.Types && n != v.m.Imports[n] {
				if p, taken := v.m.Imports[n]; taken && p != obj.Pkg().Path() {
					return false // two packages of one name
				}
			}
			args := t.TypeArgs()
			for i := 0; args != nil && i < args.Len(); i++ {
				if !ok(args.At(i)) {
					return false
				}
			}
			return true
		case *types.Pointer:
			return ok(t.Elem())
		case *types.Slice:
			return ok(t.Elem())
		case *types.Array:
			return ok(t.Elem())
		case *types.Map:
			return ok(t.Key()) && ok(t.Elem())
		case *types.Chan:
			return ok(t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := 0; i < tup.Len(); i++ {
					if !ok(tup.At(i).Type()) {
						return false
					}
				}
			}
			return true
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if !t.Field(i).Exported() || !ok(t.Field(i).Type()) {
					return false
				}
			}
			return true
		case *types.Interface:
			for i := 0; i < t.NumMethods(); i++ {
				if !t.Method(i).Exported() {
					return false
				}
			}
			return true
		}
		return false
	}
	return ok(t)
}

// importable says whether a test of the module may import the package (internal rules).
func importable(path, module string) bool {
	i := strings.LastIndex(path, "/internal")
	if i < 0 && !strings.HasPrefix(path, "internal/") {
		return !strings.Contains(path, "/vendor/")
	}
	if i < 0 {
		return false
	}
	parent := path[:i]
	return module == parent || strings.HasPrefix(module, parent+"/")
}

// of is the inputs of a type, the most typical first; name is the parameter's name.
func (v *Values) of(t types.Type, name string, depth int) []Value {
	key := fmt.Sprintf("%s|%d|%v", v.typeString(t), depth, name != "" && isPathName(name))
	if got, ok := v.cache[key]; ok {
		return got
	}
	v.cache[key] = nil // a type that contains itself gets nothing at that depth
	vals := dedup(v.make(t, name, depth))
	v.cache[key] = vals
	return vals
}

func isPathName(name string) bool {
	return isPathParam(types.NewVar(0, nil, name, types.Typ[types.String]))
}

// inherit marks a container made of values: it is made around a constructor if one of them
// is.
func inherit(parts ...Value) bool {
	for _, p := range parts {
		if p.Bypass {
			return true
		}
	}
	return false
}

func dedup(vals []Value) []Value {
	seen := map[string]bool{}
	out := vals[:0]
	for _, x := range vals {
		if !seen[x.Expr] {
			seen[x.Expr] = true
			out = append(out, x)
		}
	}
	return out
}

func (v *Values) make(t types.Type, name string, depth int) []Value {
	if !v.nameable(t) {
		return nil
	}
	ts := v.typeString(t)
	if vals, ok := v.standard(ts); ok {
		return vals
	}
	switch u := t.(type) {
	case *types.Named:
		return v.named(u, name, depth)
	case *types.Basic:
		return v.basic(u, ts, name)
	case *types.Pointer:
		return v.pointer(u, ts, depth)
	case *types.Slice:
		return v.slice(u, ts, depth)
	case *types.Array:
		var out []Value
		out = append(out, Value{Expr: ts + "{}", Tag: "zero"})
		if u.Len() > 0 && u.Len() <= 4 {
			elems := v.of(u.Elem(), "", depth+1)
			if len(elems) > 0 {
				parts := make([]string, u.Len())
				for i := range parts {
					parts[i] = elems[(i+1)%len(elems)].Expr
				}
				out = append(out, Value{Expr: ts + "{" + strings.Join(parts, ", ") + "}", Tag: "filled"})
			}
		}
		return out
	case *types.Map:
		return v.mapValues(u, ts, depth)
	case *types.Interface:
		return v.iface(t, u, ts, depth)
	case *types.Signature:
		return v.funcs(u, ts, depth)
	}
	return nil
}

// standard are the stand-ins for the standard library's own types.
func (v *Values) standard(ts string) ([]Value, bool) {
	reader := func(wrap string) []Value {
		return []Value{
			{Expr: fmt.Sprintf(wrap, `strings.NewReader("hello world")`), Tag: "reader"},
			{Expr: fmt.Sprintf(wrap, `strings.NewReader("")`), Tag: "empty_reader"},
		}
	}
	switch ts {
	case "context.Context":
		return []Value{{Expr: "context.Background()", Tag: "background"}}, true
	case "io.Reader", "io.ByteReader", "io.RuneReader", "io.ReadSeeker", "io.ReaderAt", "io.RuneScanner", "io.ByteScanner":
		return reader("%s"), true
	case "io.ReadCloser":
		return reader("io.NopCloser(%s)"), true
	case "io.Writer", "io.ByteWriter", "io.StringWriter", "io.ReadWriter":
		return []Value{{Expr: "&bytes.Buffer{}", Tag: "buffer"}}, true
	case "*bytes.Buffer":
		return []Value{{Expr: "&bytes.Buffer{}", Tag: "buffer"}, {Expr: `bytes.NewBufferString("hello world")`, Tag: "filled_buffer"}}, true
	case "*strings.Builder":
		return []Value{{Expr: "&strings.Builder{}", Tag: "builder"}}, true
	case "*strings.Reader":
		return reader("%s"), true
	case "time.Duration":
		return []Value{{Expr: "time.Second", Tag: "second"}, {Expr: "0", Tag: "zero"},
			{Expr: "time.Millisecond", Tag: "millisecond"}, {Expr: "-time.Second", Tag: "negative"},
			{Expr: "time.Hour", Tag: "hour"}}, true
	case "time.Time":
		return []Value{{Expr: "time.Date(2024, time.March, 9, 10, 30, 0, 0, time.UTC)", Tag: "date"},
			{Expr: "time.Time{}", Tag: "zero_time"}}, true
	case "*time.Location":
		return []Value{{Expr: "time.UTC", Tag: "utc"}}, true
	case "error":
		return []Value{{Expr: `errors.New("boom")`, Tag: "error"}, {Expr: "nil", Tag: "nil", Nil: true}}, true
	case "reflect.Type", "reflect.Value", "unsafe.Pointer", "*testing.T", "*os.File", "os.FileMode", "fs.FileMode", "*sync.Mutex", "sync.Mutex", "*sync.WaitGroup":
		return nil, true
	}
	return nil, false
}

func (v *Values) basic(b *types.Basic, ts, name string) []Value {
	var out []Value
	add := func(expr, tag string) { out = append(out, Value{Expr: expr, Tag: tag}) }
	info := b.Info()
	switch {
	case info&types.IsBoolean != 0:
		add("true", "true")
		add("false", "false")
	case info&types.IsString != 0:
		if name != "" && isPathName(name) {
			out = append(out, Value{Expr: `filepath.Join(dir, "tt.txt")`, Tag: "temp_file", Temp: true},
				Value{Expr: "dir", Tag: "temp_dir", Temp: true})
		}
		add(`"hello world"`, "hello_world")
		add(`""`, "empty")
		add(`"a"`, "a")
		for _, s := range v.pkg.Strings {
			add(s, tagOf(s))
		}
		// The package's operators and separators before a typical operand.
		for _, s := range v.pkg.Strings {
			if u, err := strconv.Unquote(s); err == nil && len(u) > 0 && len(u) <= 3 && !strings.ContainsAny(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ") {
				add(strconv.Quote(u+"1.2.3"), "op_"+tagOf(strconv.Quote(u+"x")))
				add(strconv.Quote(u+" 2.0"), "op_"+tagOf(strconv.Quote(u+"x")))
			}
		}
		// Shapes parsers and validators look for.
		for _, s := range []string{"1.2.3", "42", "-7", "3.14", "true", "v1.2.3-beta.1+build.5", "2.0", "1.2.3-alpha", "2024-03-09",
			"a=1", "Hello, World!", "x@example.com"} {
			add(strconv.Quote(s), tagOf(strconv.Quote(s)))
		}
		add(`"héllo wörld"`, "non_ascii")
		for _, s := range v.pkg.Strings {
			if u, err := strconv.Unquote(s); err == nil && len(u) == 1 && strings.ContainsAny(u, ",;:|/-_.= \t") {
				add(strconv.Quote("a"+u+"b"), "separated")
				add(strconv.Quote("1"+u+"2"), "numbers")
				add(strconv.Quote("1"+u+"2"+u), "numbers_separated")
			}
		}
		add(`"42"`, "number")
		add(`"  padded  "`, "padded")
	case info&types.IsInteger != 0:
		add("1", "one")
		add("0", "zero")
		unsigned := info&types.IsUnsigned != 0
		if !unsigned {
			add("-1", "negative")
		}
		add("2", "two")
		add("10", "ten")
		if b.Kind() == types.Int32 || b.Kind() == types.Uint8 {
			add("'a'", "rune_a")
		}
		for _, n := range v.pkg.Ints {
			add(n, "n"+n)
		}
		if max, min := limits(b.Kind()); max != "" {
			add(max, "max")
			if min != "" {
				add(min, "min")
			}
		}
	case info&types.IsFloat != 0:
		add("1.5", "one_and_a_half")
		add("0", "zero")
		add("-1", "negative")
		add("2", "two")
		for _, f := range v.pkg.Floats {
			add(f, "f"+strings.NewReplacer(".", "_", "-", "minus").Replace(f))
		}
		wrap := func(e string) string {
			if ts == "float64" {
				return e
			}
			return ts + "(" + e + ")"
		}
		add(wrap("math.NaN()"), "nan")
		add(wrap("math.Inf(1)"), "inf")
		add(wrap("math.Inf(-1)"), "minus_inf")
	case info&types.IsComplex != 0:
		add("0", "zero")
		add("1 + 2i", "complex")
	}
	return out
}

// limits are the largest and smallest values of an integer kind, as constants.
func limits(k types.BasicKind) (string, string) {
	switch k {
	case types.Int:
		return "math.MaxInt", "math.MinInt"
	case types.Int8:
		return "math.MaxInt8", "math.MinInt8"
	case types.Int16:
		return "math.MaxInt16", "math.MinInt16"
	case types.Int32:
		return "math.MaxInt32", "math.MinInt32"
	case types.Int64:
		return "math.MaxInt64", "math.MinInt64"
	case types.Uint:
		return "math.MaxUint", ""
	case types.Uint8:
		return "math.MaxUint8", ""
	case types.Uint16:
		return "math.MaxUint16", ""
	case types.Uint32:
		return "math.MaxUint32", ""
	case types.Uint64:
		return "math.MaxUint64", ""
	}
	return "", ""
}

// tagOf is a short name for a string literal case.
func tagOf(quoted string) string {
	s, _ := strconv.Unquote(quoted)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
		if b.Len() >= 16 {
			break
		}
	}
	t := strings.Trim(b.String(), "_")
	if t == "" {
		return "symbol"
	}
	return t
}

// onlyFallible says whether every constructor of a type returns an error too.
func (v *Values) onlyFallible(obj *types.TypeName) bool {
	if v.must(obj.Type()) != nil || v.must(types.NewPointer(obj.Type())) != nil {
		return false
	}
	for _, c := range v.pkg.Makers[obj] {
		if c.Sig.Results().Len() == 1 {
			return false
		}
	}
	return true
}

func (v *Values) named(n *types.Named, name string, depth int) (out []Value) {
	ts := v.typeString(n)
	if n.Obj().Pkg() == v.pkg.Types {
		for _, c := range v.pkg.Consts[ts] {
			out = append(out, Value{Expr: c, Tag: strings.ToLower(c[strings.LastIndex(c, ".")+1:])})
		}
		made := v.made(n.Obj(), false, depth)
		if len(made) > 0 && !v.onlyFallible(n.Obj()) {
			return append(out, made...)
		}
		// Constructors that may fail come after the type's literals.
		defer func() { out = append(out, made...) }()
	}
	switch u := n.Underlying().(type) {
	case *types.Struct:
		out = append(out, v.structs(ts, u, depth)...)
	case *types.Interface:
		out = append(out, v.iface(n, u, ts, depth)...)
	case *types.Basic:
		for _, x := range v.basic(u, v.typeString(u), name) {
			if strings.Contains(x.Expr, "(") {
				x.Expr = ts + "(" + x.Expr + ")"
			} else {
				x.Convert = true
			}
			out = append(out, x)
		}
	default:
		for _, x := range v.make(u, name, depth) {
			x.Convert = true
			out = append(out, x)
		}
	}
	return out
}

// structs are a struct type's literals: its zero value, and its exported fields set.
func (v *Values) structs(ts string, s *types.Struct, depth int) []Value {
	out := []Value{{Expr: ts + "{}", Tag: "zero_value"}}
	defer func() {
		if obj, ok := v.m.typeNamed(ts, v.pkg); (ok && len(v.pkg.Makers[obj]) > 0) || hasUnexported(s) {
			for i := range out {
				out[i].Bypass = true
			}
		}
	}()
	if depth > 1 {
		return out
	}
	var fields []string
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if !f.Exported() || f.Embedded() {
			continue
		}
		if vals := v.of(f.Type(), f.Name(), depth+1); len(vals) > 0 && !vals[0].Temp {
			fields = append(fields, f.Name()+": "+vals[0].Expr)
			if vals[0].Bypass {
				defer func() { out[len(out)-1].Bypass = true }()
			}
		}
	}
	if len(fields) > 0 {
		out = append(out, Value{Expr: ts + "{" + strings.Join(fields, ", ") + "}", Tag: "filled"})
	}
	return out
}

// hasUnexported says whether a struct has fields a literal outside its package cannot set.
func hasUnexported(s *types.Struct) bool {
	for i := 0; i < s.NumFields(); i++ {
		if !s.Field(i).Exported() {
			return true
		}
	}
	return false
}

// made are a package type's values from its constructors (pointer: as *T).
func (v *Values) made(obj *types.TypeName, pointer bool, depth int) []Value {
	makers := v.pkg.Makers[obj]
	if len(makers) == 0 || depth > 2 || v.making[obj] {
		return nil
	}
	v.making[obj] = true
	defer delete(v.making, obj)
	// Constructors that cannot fail first.
	sorted := append([]*Callable(nil), makers...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].Sig.Results().Len() < sorted[j].Sig.Results().Len()
	})
	want := v.typeString(obj.Type())
	if pointer {
		want = "*" + want
	}
	var out []Value
	for _, c := range sorted {
		res := c.Sig.Results()
		gives := v.typeString(res.At(0).Type())
		fallible := res.Len() == 2
		per := 2
		if fallible {
			per = 4
		}
		sets := append(append([][]Value{}, v.good[c]...), v.argSets(c, depth+1, per)...)
		if fallible && len(v.good[c]) > 0 {
			sets = v.good[c]
		}
		for _, args := range sets {
			call := v.pkg.Alias + "." + c.Name + "(" + joinArgs(c.Sig, args) + ")"
			temp := false
			for _, a := range args {
				temp = temp || a.Temp
			}
			if temp {
				continue
			}
			expr, mayFail := call, fallible
			if must := v.must(res.At(0).Type()); mayFail && must != nil {
				// pkg.Must(pkg.NewT(…)): the package's own helper for a constructor that can fail.
				mayFail, call = false, v.pkg.Alias+"."+must.Name+"("+call+")"
				expr = call
			}
			switch {
			case mayFail:
				deref := ""
				if gives != want {
					if pointer {
						expr = "func() " + want + " { v, err := " + call + "; if err != nil { panic(err) }; return &v }()"
						break
					}
					deref = "*"
				}
				if expr == call {
					expr = "func() " + want + " { v, err := " + call + "; if err != nil { panic(err) }; return " + deref + "v }()"
				}
			case gives != want && pointer:
				expr = "func() " + want + " { v := " + call + "; return &v }()"
			case gives != want:
				expr = "*" + call
			}
			out = append(out, Value{Expr: expr, Tag: tagOfCall(c.Name, args)})
			if len(out) >= v.madeLimit() {
				return out
			}
		}
	}
	return out
}

// must is the package's Must-style helper for a type: func(T, error) T.
func (v *Values) must(t types.Type) *Callable {
	for _, c := range v.m.Callables {
		sig := c.Sig
		if c.Pkg != v.pkg || c.Recv != nil || sig.Params().Len() != 2 || sig.Results().Len() != 1 {
			continue
		}
		if types.Identical(sig.Params().At(0).Type(), t) && isError(sig.Params().At(1).Type()) &&
			types.Identical(sig.Results().At(0).Type(), t) {
			return c
		}
	}
	return nil
}

func (v *Values) madeLimit() int {
	if v.wide {
		return 12
	}
	return 6
}

// widen switches between the first generation's few values and the later ones' many.
func (v *Values) widen(wide bool) {
	if v.wide != wide {
		v.wide = wide
		v.cache = map[string][]Value{}
	}
}

// learn records a constructor call that succeeded, for the next generation's values.
func (v *Values) learn(c *Callable, args []Value) {
	if c.Makes == nil || c.Sig.Results().Len() != 2 || len(v.good[c]) >= 12 {
		return
	}
	for _, a := range args {
		if a.Temp || a.Bypass {
			return
		}
	}
	v.good[c] = append(v.good[c], args)
	v.cache = map[string][]Value{}
}

func tagOfCall(name string, args []Value) string {
	tag := strings.ToLower(name)
	if len(args) > 0 && args[0].Tag != "" {
		tag += "_" + args[0].Tag
	}
	return tag
}

// argSets are up to n argument lists for a callable: the first values of every parameter, then
// each parameter in turn through its other values.
func (v *Values) argSets(c *Callable, depth, n int) [][]Value {
	params := c.Sig.Params()
	pools := make([][]Value, params.Len())
	for i := 0; i < params.Len(); i++ {
		pools[i] = v.pool(c, i, depth)
		if len(pools[i]) == 0 {
			return nil
		}
	}
	var out [][]Value
	base := make([]Value, len(pools))
	for i := range pools {
		base[i] = pools[i][0]
	}
	out = append(out, base)
	for i := range pools {
		for _, x := range pools[i][1:] {
			if len(out) >= n {
				return out
			}
			row := append([]Value(nil), base...)
			row[i] = x
			out = append(out, row)
		}
	}
	return out
}

// pool is the values a callable's parameter i gets: for a function that writes files, a path
// is only ever one in the test's temporary folder.
func (v *Values) pool(c *Callable, i, depth int) []Value {
	p := c.Sig.Params().At(i)
	vals := v.of(p.Type(), p.Name(), depth)
	if !c.WritesFiles || !isPathParam(p) {
		return vals
	}
	var temp []Value
	for _, x := range vals {
		if x.Temp {
			temp = append(temp, x)
		}
	}
	return temp
}

// joinArgs writes arguments for a call (a variadic slice spread).
func joinArgs(sig *types.Signature, args []Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Expr
		if sig.Variadic() && i == len(args)-1 {
			parts[i] += "..."
		}
	}
	return strings.Join(parts, ", ")
}

func (v *Values) pointer(p *types.Pointer, ts string, depth int) []Value {
	var out []Value
	if n, ok := p.Elem().(*types.Named); ok && n.Obj().Pkg() == v.pkg.Types {
		made := v.made(n.Obj(), true, depth)
		if len(made) == 0 || v.onlyFallible(n.Obj()) {
			if s, ok := n.Underlying().(*types.Struct); ok {
				for _, x := range v.structs(v.typeString(n), s, depth) {
					out = append(out, Value{Expr: "&" + x.Expr, Tag: x.Tag, Bypass: x.Bypass})
				}
			}
		}
		out = append(out, made...)
	} else if _, ok := p.Elem().Underlying().(*types.Struct); ok {
		out = append(out, Value{Expr: "&" + v.typeString(p.Elem()) + "{}", Tag: "zero_value"})
	} else {
		out = append(out, Value{Expr: "new(" + v.typeString(p.Elem()) + ")", Tag: "new"})
	}
	return append(out, Value{Expr: "nil", Tag: "nil", Nil: true})
}

func (v *Values) slice(s *types.Slice, ts string, depth int) []Value {
	if b, ok := s.Elem().(*types.Basic); ok && b.Kind() == types.Uint8 {
		out := []Value{{Expr: `[]byte("hello world")`, Tag: "bytes"}, {Expr: "[]byte{}", Tag: "empty"},
			{Expr: "nil", Tag: "nil"}, {Expr: `[]byte("a")`, Tag: "one_byte"}, {Expr: "[]byte{0, 255}", Tag: "binary"}}
		// What decoders read: JSON values, and the strings every string parameter gets.
		for _, j := range []string{`"1.2.3"`, `null`, `42`, `{"a":1}`, `[1,2]`} {
			out = append(out, Value{Expr: "[]byte(" + strconv.Quote(j) + ")", Tag: "json_" + tagOf(strconv.Quote(j))})
		}
		for _, x := range v.basic(types.Typ[types.String], "string", "")[3:] {
			out = append(out, Value{Expr: "[]byte(" + x.Expr + ")", Tag: "bytes_" + x.Tag})
		}
		return out
	}
	if depth > 2 {
		return []Value{{Expr: "nil", Tag: "nil"}}
	}
	elems := v.of(s.Elem(), "", depth+1)
	var out []Value
	if len(elems) > 0 {
		// Typical values first: the boundaries and NaNs come late in every list.
		a, b, c := elems[0], elems[3%len(elems)], elems[1%len(elems)]
		out = append(out, Value{Expr: ts + "{" + a.Expr + ", " + b.Expr + ", " + c.Expr + "}", Tag: "three",
			Bypass: inherit(a, b, c)})
	}
	out = append(out, Value{Expr: ts + "{}", Tag: "empty"}, Value{Expr: "nil", Tag: "nil"})
	if len(elems) > 0 {
		out = append(out, Value{Expr: ts + "{" + elems[0].Expr + "}", Tag: "one", Bypass: inherit(elems[0])})
		if len(elems) > 2 {
			out = append(out, Value{Expr: ts + "{" + elems[2].Expr + ", " + elems[1].Expr + ", " + elems[0].Expr + "}",
				Tag: "descending", Bypass: inherit(elems[:3]...)})
		}
		out = append(out, Value{Expr: ts + "{" + elems[0].Expr + ", " + elems[0].Expr + "}", Tag: "repeated",
			Bypass: inherit(elems[0])})
	}
	return out
}

func (v *Values) mapValues(m *types.Map, ts string, depth int) []Value {
	out := []Value{}
	if depth <= 2 {
		keys := v.of(m.Key(), "", depth+1)
		vals := v.of(m.Elem(), "", depth+1)
		if len(keys) > 0 && len(vals) > 0 && !keys[0].Nil {
			out = append(out, Value{Expr: ts + "{" + keys[0].Expr + ": " + vals[0].Expr + "}", Tag: "one_entry",
				Bypass: inherit(keys[0], vals[0])})
			if len(keys) > 1 && len(vals) > 1 && !keys[1].Nil {
				out = append(out, Value{Expr: ts + "{" + keys[0].Expr + ": " + vals[0].Expr + ", " +
					keys[1].Expr + ": " + vals[1].Expr + "}", Tag: "two_entries", Bypass: inherit(keys[0], vals[0], keys[1], vals[1])})
			}
		}
	}
	return append(out, Value{Expr: ts + "{}", Tag: "empty"}, Value{Expr: "nil", Tag: "nil", Nil: true})
}

// iface are values of the package's types that implement an interface, any for the empty one.
func (v *Values) iface(t types.Type, u *types.Interface, ts string, depth int) []Value {
	if u.Empty() {
		return []Value{{Expr: "1", Tag: "int"}, {Expr: `"hello world"`, Tag: "string"},
			{Expr: "nil", Tag: "nil", Nil: true}, {Expr: "true", Tag: "bool"}, {Expr: "[]int{1, 2}", Tag: "slice"}}
	}
	var out []Value
	if depth <= 2 {
		scope := v.pkg.Types.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || !tn.Exported() || tn.IsAlias() {
				continue
			}
			named, ok := tn.Type().(*types.Named)
			if !ok || named.TypeParams().Len() > 0 {
				continue
			}
			if _, isIface := named.Underlying().(*types.Interface); isIface {
				continue
			}
			switch {
			case types.Implements(named, u):
				out = append(out, v.of(named, "", depth+1)...)
			case types.Implements(types.NewPointer(named), u):
				out = append(out, v.of(types.NewPointer(named), "", depth+1)...)
			}
			if len(out) >= 6 {
				break
			}
		}
	}
	kept := out[:0]
	for _, x := range out {
		if !x.Nil {
			kept = append(kept, x)
		}
	}
	return append(kept, Value{Expr: "nil", Tag: "nil", Nil: true})
}

// funcs are function literals for a function parameter: identity, constant and predicate.
func (v *Values) funcs(s *types.Signature, ts string, depth int) []Value {
	params := s.Params()
	names := make([]string, params.Len())
	decl := make([]string, params.Len())
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
		t := v.typeString(params.At(i).Type())
		if s.Variadic() && i == params.Len()-1 {
			t = "..." + strings.TrimPrefix(t, "[]")
		}
		decl[i] = names[i] + " " + t
	}
	res := s.Results()
	resTypes := make([]string, res.Len())
	for i := range resTypes {
		resTypes[i] = v.typeString(res.At(i).Type())
	}
	head := "func(" + strings.Join(decl, ", ") + ")"
	switch res.Len() {
	case 0:
	case 1:
		head += " " + resTypes[0]
	default:
		head += " (" + strings.Join(resTypes, ", ") + ")"
	}
	// Parameters the literal does not use are fine in Go; results need a value each.
	var out []Value
	if res.Len() == 0 {
		out = append(out, Value{Expr: head + " {}", Tag: "noop"})
	} else if res.Len() == 1 {
		r := res.At(0).Type()
		for i := 0; i < params.Len(); i++ {
			if types.Identical(params.At(i).Type(), r) && !(s.Variadic() && i == params.Len()-1) {
				out = append(out, Value{Expr: head + " { return " + names[i] + " }", Tag: "identity"})
				break
			}
		}
		if b, ok := r.Underlying().(*types.Basic); ok && b.Info()&types.IsBoolean != 0 {
			if params.Len() > 0 {
				if pb, ok := params.At(0).Type().Underlying().(*types.Basic); ok && !s.Variadic() {
					switch {
					case pb.Info()&types.IsString != 0:
						out = append(out, Value{Expr: head + " { return " + names[0] + ` != "" }`, Tag: "non_empty"})
					case pb.Info()&types.IsNumeric != 0:
						out = append(out, Value{Expr: head + " { return " + names[0] + " > 0 }", Tag: "positive"})
					}
				}
			}
			out = append(out, Value{Expr: head + " { return true }", Tag: "always"},
				Value{Expr: head + " { return false }", Tag: "never"})
		}
	}
	if res.Len() > 0 && depth <= 2 {
		rets := make([]string, res.Len())
		ok := true
		for i := 0; i < res.Len(); i++ {
			vals := v.of(res.At(i).Type(), "", depth+1)
			if len(vals) == 0 || vals[0].Temp {
				ok = false
				break
			}
			rets[i] = vals[0].Expr
		}
		if ok {
			out = append(out, Value{Expr: head + " { return " + strings.Join(rets, ", ") + " }", Tag: "constant"})
		}
	}
	return append(out, Value{Expr: "nil", Tag: "nil", Nil: true})
}
