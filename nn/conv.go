package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Conv2d is a 2-D convolution layer (PyTorch's nn.Conv2d): y = conv2d(x,
// W) + b for x [N In H W], with W of shape [Out In/Groups kH kW] and b of
// shape [Out].
type Conv2d struct {
	// W is the weight, shape [Out In/Groups kH kW] (PyTorch's layout).
	W *ad.Value
	// B is the bias, shape [Out], or nil for a layer without bias.
	B *ad.Value
	// Opts are the stride, padding, dilation and groups of the convolution.
	Opts ad.Conv2dOptions
}

// Conv2dConfig configures NewConv2d. Zero fields mean: float64, stride 1,
// padding 0, dilation 1, one group, with a bias.
type Conv2dConfig struct {
	DType                     tensor.DType
	Stride, Padding, Dilation [2]int // per axis: height, width
	Groups                    int
	NoBias                    bool
}

// NewConv2d returns a layer mapping in channels to out with a kernel of
// kernel[0]×kernel[1] (nil c means the zero Conv2dConfig). Weight and bias
// are drawn from rng (weight first, row-major) from U(−1/√fanIn, 1/√fanIn),
// fanIn = In/Groups·kH·kW: PyTorch's default (Kaiming uniform with a = √5).
// Sizes that cannot be built panic with an *Error wrapping ErrConfig.
func NewConv2d(in, out int, kernel [2]int, rng *rand.Rand, c *Conv2dConfig) *Conv2d {
	needRNG("conv2d", rng)
	var cfg Conv2dConfig
	if c != nil {
		cfg = *c
	}
	g := cfg.Groups
	if g == 0 {
		g = 1
	}
	bad := func(format string, args ...any) {
		panic(&Error{Op: "conv2d", Err: ErrConfig, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case in < 1 || out < 1:
		bad("channels %d→%d must be positive", in, out)
	case kernel[0] < 1 || kernel[1] < 1:
		bad("kernel %v must be positive", kernel)
	case g < 1 || in%g != 0 || out%g != 0:
		bad("groups %d must divide both channel counts %d and %d", g, in, out)
	case cfg.Stride[0] < 0 || cfg.Stride[1] < 0 || cfg.Dilation[0] < 0 || cfg.Dilation[1] < 0:
		bad("stride %v and dilation %v must be positive (0: 1)", cfg.Stride, cfg.Dilation)
	case cfg.Padding[0] < 0 || cfg.Padding[1] < 0:
		bad("padding %v must not be negative", cfg.Padding)
	}
	fanIn := in / g * kernel[0] * kernel[1]
	bound := 1 / math.Sqrt(float64(fanIn))
	w := tensor.New(cfg.DType, out, in/g, kernel[0], kernel[1])
	fillUniform(w, bound, rng)
	l := &Conv2d{W: ad.Var(w), Opts: ad.Conv2dOptions{Stride: cfg.Stride, Padding: cfg.Padding, Dilation: cfg.Dilation, Groups: g}}
	if !cfg.NoBias {
		b := tensor.New(cfg.DType, out)
		fillUniform(b, bound, rng)
		l.B = ad.Var(b)
	}
	return l
}

// fillUniform fills t with draws from U(−bound, bound), made in float64 in
// row-major order, and bumps its version.
func fillUniform(t *tensor.Tensor, bound float64, rng *rand.Rand) {
	f32, f64 := t.Float32s(), t.Float64s()
	for i := range t.Len() {
		v := (2*rng.Float64() - 1) * bound
		if f32 != nil {
			f32[i] = float32(v)
		} else {
			f64[i] = v
		}
	}
	t.BumpVersion()
}

// In returns the number of input channels.
func (l *Conv2d) In() int { return l.W.Shape()[1] * max(l.Opts.Groups, 1) }

// Out returns the number of output channels.
func (l *Conv2d) Out() int { return l.W.Shape()[0] }

// Forward returns the convolution of x [N In H W] plus the bias: [N Out H'
// W'].
func (l *Conv2d) Forward(x *ad.Value) *ad.Value {
	if l.B != nil {
		return ad.Conv2dBias(x, l.W, l.B, l.Opts) // the bias added as the output is laid out
	}
	return ad.Conv2d(x, l.W, l.Opts)
}

// ForwardAct returns act(the convolution of x plus the bias), the
// activation fused into the convolution (Conv2dOptions.Act: one pass over
// the output fewer each way than Relu(l.Forward(x)), the same values).
func (l *Conv2d) ForwardAct(x *ad.Value, act ad.Activation) *ad.Value {
	o := l.Opts
	o.Act = act
	if l.B != nil {
		return ad.Conv2dBias(x, l.W, l.B, o)
	}
	return ad.Conv2d(x, l.W, o)
}

// ForwardActPool returns p.Forward(l.ForwardAct(x, act)), the pool fused
// into the convolution where it can be (Conv2dOptions.MaxPool: a 2×2 pool
// of stride 2 after no activation or ReLU, LeNet's and VGG's; others run
// as the pool after). The same values; fused, the backward pass keeps one
// byte a window of the output before pooling instead of the output, and no
// pass over it or gradient of its size is made outside the convolution.
func (l *Conv2d) ForwardActPool(x *ad.Value, act ad.Activation, p *MaxPool2d) *ad.Value {
	o := l.Opts
	o.Act, o.MaxPool = act, &p.Opts
	if l.B != nil {
		return ad.Conv2dBias(x, l.W, l.B, o)
	}
	return ad.Conv2d(x, l.W, o)
}

// Params returns "weight" and, if present, "bias".
func (l *Conv2d) Params() []Param {
	ps := []Param{{Name: "weight", Value: l.W, Field: &l.W}}
	if l.B != nil {
		ps = append(ps, Param{Name: "bias", Value: l.B, Field: &l.B})
	}
	return ps
}
