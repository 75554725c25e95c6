package optim

import "math"

// Schedule gives the learning rate at a step (counted from 0).
type Schedule interface {
	LR(step int) float64
}

// Cosine decays the rate from Base to Min along half a cosine over Steps
// steps, after a linear warm-up of Warmup steps from Base/Warmup to Base.
// Past Steps it stays at Min.
type Cosine struct {
	Base, Min     float64
	Steps, Warmup int
}

// LR returns the rate at step.
func (s Cosine) LR(step int) float64 {
	if step < s.Warmup {
		return s.Base * float64(step+1) / float64(s.Warmup)
	}
	span := s.Steps - s.Warmup
	if span <= 0 || step >= s.Steps {
		return s.Min
	}
	f := float64(step-s.Warmup) / float64(span)
	return s.Min + (s.Base-s.Min)*(1+math.Cos(math.Pi*f))/2
}

// StepDecay multiplies the rate Base by Gamma every Every steps.
type StepDecay struct {
	Base, Gamma float64
	Every       int
}

// LR returns the rate at step.
func (s StepDecay) LR(step int) float64 {
	if s.Every <= 0 {
		return s.Base
	}
	return s.Base * math.Pow(s.Gamma, float64(step/s.Every))
}
