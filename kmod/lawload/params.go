package lawload

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Names inside every kmod/bpf object (kmod/bpf/cc_glue.h and <law>.bpf.c).
const (
	paramsVar     = "cclab_params"         // const volatile struct <law>_params
	defaultProg   = "cclab_params_default" // syscall: ctx <- <law>_params_default()
	checkProg     = "cclab_params_check"   // syscall: return <law>_params_check(ctx)
	structOpsMap  = "cclab_ops"            // the tcp_congestion_ops
	rodataSection = ".rodata"
	msgLen        = 96 // struct cclab_params_ctx.msg (kmod/bpf/cc_law.h)
)

// Param is one field of a law's parameter struct, in the law's own fixed
// point scale (kmod/law/README.md).
type Param struct {
	Name   string
	Value  uint64
	Signed bool

	off, size int
}

// String formats the value, signed when the field is.
func (p Param) String() string {
	if p.Signed {
		return strconv.FormatInt(p.signed(), 10)
	}
	return strconv.FormatUint(p.Value, 10)
}

func (p Param) signed() int64 {
	shift := 64 - 8*p.size
	return int64(p.Value<<shift) >> shift
}

// Params is a law's parameter struct, field by field in declaration order.
type Params struct {
	Law    string
	Fields []Param
	size   int
}

// Map returns the parameters by name, as written into run.json.
func (ps Params) Map() map[string]any {
	m := make(map[string]any, len(ps.Fields))
	for _, p := range ps.Fields {
		if p.Signed {
			m[p.Name] = p.signed()
		} else {
			m[p.Name] = p.Value
		}
	}
	return m
}

// MarshalJSON writes the parameters as an object name -> value.
func (ps Params) MarshalJSON() ([]byte, error) { return json.Marshal(ps.Map()) }

// String is "name=value name=value ...".
func (ps Params) String() string {
	parts := make([]string, len(ps.Fields))
	for i, p := range ps.Fields {
		parts[i] = p.Name + "=" + p.String()
	}
	return strings.Join(parts, " ")
}

// Get returns the field of that name.
func (ps Params) Get(name string) (Param, bool) {
	for _, p := range ps.Fields {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// set parses value into the field of that name.
func (ps *Params) set(name, value string) error {
	for i := range ps.Fields {
		p := &ps.Fields[i]
		if p.Name != name {
			continue
		}
		bits := 8 * p.size
		if p.Signed {
			v, err := strconv.ParseInt(value, 0, bits)
			if err != nil {
				return fmt.Errorf("%s parameter %s=%q: want a %d-bit signed integer", ps.Law, name, value, bits)
			}
			p.Value = uint64(v)
			if bits < 64 {
				p.Value &= 1<<bits - 1
			}
			return nil
		}
		v, err := strconv.ParseUint(value, 0, bits)
		if err != nil {
			return fmt.Errorf("%s parameter %s=%q: want a %d-bit unsigned integer", ps.Law, name, value, bits)
		}
		p.Value = v
		return nil
	}
	return fmt.Errorf("%s has no parameter %q (it has: %s)", ps.Law, name, strings.Join(ps.names(), ", "))
}

func (ps Params) names() []string {
	n := make([]string, len(ps.Fields))
	for i, p := range ps.Fields {
		n[i] = p.Name
	}
	return n
}

// bytes encodes the struct as the law's C code sees it.
func (ps Params) bytes() []byte {
	b := make([]byte, ps.size)
	for _, p := range ps.Fields {
		f := b[p.off : p.off+p.size]
		switch p.size {
		case 1:
			f[0] = byte(p.Value)
		case 2:
			binary.NativeEndian.PutUint16(f, uint16(p.Value))
		case 4:
			binary.NativeEndian.PutUint32(f, uint32(p.Value))
		case 8:
			binary.NativeEndian.PutUint64(f, p.Value)
		}
	}
	return b
}

// decode fills the fields from the struct's bytes.
func (ps *Params) decode(b []byte) error {
	if len(b) < ps.size {
		return fmt.Errorf("%s parameters: %d bytes, want %d", ps.Law, len(b), ps.size)
	}
	for i := range ps.Fields {
		p := &ps.Fields[i]
		f := b[p.off : p.off+p.size]
		switch p.size {
		case 1:
			p.Value = uint64(f[0])
		case 2:
			p.Value = uint64(binary.NativeEndian.Uint16(f))
		case 4:
			p.Value = uint64(binary.NativeEndian.Uint32(f))
		case 8:
			p.Value = binary.NativeEndian.Uint64(f)
		}
	}
	return nil
}

// layout reads the parameter struct's fields from the object's BTF: the
// law core's header is the only place they are declared.
func layout(law string, spec *ebpf.CollectionSpec) (Params, *ebpf.VariableSpec, error) {
	v, ok := spec.Variables[paramsVar]
	if !ok || v.Type == nil {
		return Params{}, nil, fmt.Errorf("%s object has no %s variable", law, paramsVar)
	}
	st, ok := btf.As[*btf.Struct](v.Type.Type)
	if !ok {
		return Params{}, nil, fmt.Errorf("%s: %s is not a struct", law, paramsVar)
	}
	ps := Params{Law: law, size: int(st.Size)}
	if err := ps.addFields(st, "", 0); err != nil {
		return Params{}, nil, err
	}
	return ps, v, nil
}

// addFields appends the integer fields of st (at byte offset base), nested
// structs flattened as "outer.inner". Fields named pad* are padding.
func (ps *Params) addFields(st *btf.Struct, prefix string, base int) error {
	for _, m := range st.Members {
		off := base + int(m.Offset.Bytes())
		if inner, ok := btf.As[*btf.Struct](m.Type); ok {
			if err := ps.addFields(inner, prefix+m.Name+"_", off); err != nil {
				return err
			}
			continue
		}
		in, ok := btf.As[*btf.Int](m.Type)
		if !ok || m.BitfieldSize != 0 {
			return fmt.Errorf("%s parameter %s%s: only integer fields are supported", ps.Law, prefix, m.Name)
		}
		if strings.HasPrefix(m.Name, "pad") {
			continue
		}
		ps.Fields = append(ps.Fields, Param{
			Name:   prefix + m.Name,
			Signed: in.Encoding&btf.Signed != 0,
			off:    off,
			size:   int(in.Size),
		})
	}
	return nil
}

// defaults runs the law core's <law>_params_default() in the kernel (a
// syscall program of the same object), so Go repeats none of it.
func defaults(law string, spec *ebpf.CollectionSpec) (Params, error) {
	ps, _, err := layout(law, spec)
	if err != nil {
		return Params{}, err
	}
	var objs struct {
		Prog *ebpf.Program `ebpf:"cclab_params_default"`
	}
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return Params{}, fmt.Errorf("load %s parameter defaults program: %w", law, err)
	}
	defer objs.Prog.Close()
	in := make([]byte, ps.size+msgLen)
	out := make([]byte, ps.size+msgLen)
	if _, err := objs.Prog.Run(&ebpf.RunOptions{Context: in, ContextOut: out}); err != nil {
		return Params{}, fmt.Errorf("run %s parameter defaults: %w", law, err)
	}
	if err := ps.decode(out); err != nil {
		return Params{}, err
	}
	return ps, nil
}

// check runs the law core's <law>_params_check() in the kernel.
func check(spec *ebpf.CollectionSpec, ps Params) error {
	var objs struct {
		Prog *ebpf.Program `ebpf:"cclab_params_check"`
	}
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return fmt.Errorf("load %s parameter check program: %w", ps.Law, err)
	}
	defer objs.Prog.Close()
	ctx := append(ps.bytes(), make([]byte, msgLen)...)
	out := make([]byte, len(ctx))
	ret, err := objs.Prog.Run(&ebpf.RunOptions{Context: ctx, ContextOut: out})
	if err != nil {
		return fmt.Errorf("run %s parameter check: %w", ps.Law, err)
	}
	if ret != 0 {
		msg, _, _ := strings.Cut(string(out[ps.size:]), "\x00")
		return fmt.Errorf("%s parameters rejected: %s (%s_params_check: %d; requested: %s)",
			ps.Law, msg, ps.Law, int32(ret), ps)
	}
	return nil
}
