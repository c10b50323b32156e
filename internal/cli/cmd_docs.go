package cli

func init() {
	runners["completion"] = func(x *call) error {
		s, err := Completion(x.reg, x.in.String("shell"))
		if err != nil {
			return err
		}
		return rawOut(x, s)
	}
	runners["man"] = func(x *call) error {
		s, err := ManPage(x.reg, x.in.String("command"))
		if err != nil {
			return err
		}
		return rawOut(x, s)
	}
	runners["tools"] = func(x *call) error {
		p := x.sb.Policy()
		return x.out.emit(Tools(x.reg, func(name string) bool { return opsEnabled(x.reg, p, name) }), nil, nil, nil)
	}
}

// rawOut prints documentation text as is, whatever the format.
func rawOut(x *call, s string) error {
	_, err := x.out.w.Write([]byte(s))
	return err
}
