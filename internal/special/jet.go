package special

// jet is a second-order Taylor jet in two variables s and t: a value, its
// two first partials and the three second partials ∂ss, ∂st, ∂tt. The
// incomplete gamma and beta functions carry jets in their shape parameters
// through their series and continued fractions, which differentiates the
// iteration itself.
type jet struct {
	v, ds, dt, hss, hst, htt float64
}

// jconst returns the jet of a constant.
func jconst(c float64) jet { return jet{v: c} }

// jvarS returns the jet of the first variable at x.
func jvarS(x float64) jet { return jet{v: x, ds: 1} }

// jvarT returns the jet of the second variable at x.
func jvarT(x float64) jet { return jet{v: x, dt: 1} }

func (u jet) add(w jet) jet {
	return jet{u.v + w.v, u.ds + w.ds, u.dt + w.dt, u.hss + w.hss, u.hst + w.hst, u.htt + w.htt}
}

func (u jet) sub(w jet) jet {
	return jet{u.v - w.v, u.ds - w.ds, u.dt - w.dt, u.hss - w.hss, u.hst - w.hst, u.htt - w.htt}
}

func (u jet) addc(c float64) jet { u.v += c; return u }

func (u jet) scale(c float64) jet {
	return jet{c * u.v, c * u.ds, c * u.dt, c * u.hss, c * u.hst, c * u.htt}
}

func (u jet) mul(w jet) jet {
	return jet{
		v:   u.v * w.v,
		ds:  u.ds*w.v + u.v*w.ds,
		dt:  u.dt*w.v + u.v*w.dt,
		hss: u.hss*w.v + 2*u.ds*w.ds + u.v*w.hss,
		hst: u.hst*w.v + u.ds*w.dt + u.dt*w.ds + u.v*w.hst,
		htt: u.htt*w.v + 2*u.dt*w.dt + u.v*w.htt,
	}
}

// chain returns g∘u for a function g with value f, derivative f1 and second
// derivative f2 at u.v.
func (u jet) chain(f, f1, f2 float64) jet {
	return jet{
		v:   f,
		ds:  f1 * u.ds,
		dt:  f1 * u.dt,
		hss: f2*u.ds*u.ds + f1*u.hss,
		hst: f2*u.ds*u.dt + f1*u.hst,
		htt: f2*u.dt*u.dt + f1*u.htt,
	}
}

func (u jet) recip() jet {
	r := 1 / u.v
	return u.chain(r, -r*r, 2*r*r*r)
}

func (u jet) div(w jet) jet { return u.mul(w.recip()) }

func (u jet) lgamma() jet {
	v, d, dd := Lgamma(u.v)
	return u.chain(v, d, dd)
}
