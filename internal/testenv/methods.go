package testenv

import "reflect"

// Call is what one method call made by CallMethods did.
type Call struct {
	Name  string          // the method
	Out   []reflect.Value // its results (none when it panicked)
	Panic any             // what it panicked with, or nil
}

// CallMethods calls every exported method of recv (a nil pointer, say)
// with the arguments arg makes for each parameter type, and reports what
// each returned or panicked with. For a variadic parameter arg gets the
// slice type: a valid Value is passed as the whole slice, the zero Value
// passes nothing.
func CallMethods(recv any, arg func(reflect.Type) reflect.Value) []Call {
	v := reflect.ValueOf(recv)
	typ := v.Type()
	var calls []Call
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		args := []reflect.Value{v}
		n := m.Type.NumIn()
		var rest reflect.Value
		if m.Type.IsVariadic() {
			n--
			rest = arg(m.Type.In(n))
		}
		for j := 1; j < n; j++ {
			args = append(args, arg(m.Type.In(j)))
		}
		c := Call{Name: m.Name}
		func() {
			defer func() { c.Panic = recover() }()
			if rest.IsValid() {
				c.Out = m.Func.CallSlice(append(args, rest))
			} else {
				c.Out = m.Func.Call(args)
			}
		}()
		calls = append(calls, c)
	}
	return calls
}
