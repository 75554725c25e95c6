package special

// Unary names a unary function of the package by its name in Stan's math
// library.
type Unary struct {
	Name string
	F    func(x float64) (v, d, dd float64)
}

// Binary names a binary function of the package by its name in Stan's math
// library.
type Binary struct {
	Name string
	F    func(x, y float64) (v float64, g [2]float64, h [3]float64)
}

// Ternary names a ternary function of the package by its name in Stan's math
// library.
type Ternary struct {
	Name string
	F    func(x, y, z float64) (v float64, g [3]float64, h [6]float64)
}

// Unaries lists every unary function, for a caller that builds its
// derivative table from this package and for the tests that sweep them all.
var Unaries = []Unary{
	{"lgamma", Lgamma},
	{"digamma", Digamma},
	{"trigamma", Trigamma},
	{"erfc", Erfc},
	{"Phi", Phi},
	{"inv_Phi", InvPhi},
	{"logit", Logit},
	{"inv_logit", InvLogit},
	{"log_inv_logit", LogInvLogit},
	{"log1m_inv_logit", Log1mInvLogit},
	{"log1m", Log1m},
	{"log1m_exp", Log1mExp},
	{"log1p_exp", Log1pExp},
	{"asinh", Asinh},
	{"acosh", Acosh},
	{"atanh", Atanh},
	{"floor", Floor},
	{"ceil", Ceil},
	{"round", Round},
	{"trunc", Trunc},
	{"modified_bessel_first_kind_0", BesselI0},
	{"modified_bessel_first_kind_1", BesselI1},
	{"modified_bessel_second_kind_0", BesselK0},
	{"modified_bessel_second_kind_1", BesselK1},
}

// Binaries lists every binary function; see [Unaries].
var Binaries = []Binary{
	{"lbeta", Lbeta},
	{"lchoose", Lchoose},
	{"gamma_p", GammaP},
	{"gamma_q", GammaQ},
	{"log_diff_exp", LogDiffExp},
	{"log_sum_exp", LogSumExp},
	{"fmin", Fmin},
	{"fmax", Fmax},
}

// Ternaries lists every ternary function; see [Unaries].
var Ternaries = []Ternary{
	{"inc_beta", IncBeta},
	{"fma", Fma},
}
