package stats

import "math"

// MeanCI is the sample mean of xs (NaN dropped), its Student-t conf
// interval and the number of values used. With fewer than 2 values the
// interval is (-Inf, +Inf); with none the mean is NaN as well.
func MeanCI(xs []float64, conf float64) (est float64, ci Interval, n int) {
	sum := 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN(), unbounded(), 0
	}
	mean := sum / float64(n)
	if n < 2 {
		return mean, unbounded(), n
	}
	ss := 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			ss += (x - mean) * (x - mean)
		}
	}
	se := math.Sqrt(ss / float64(n-1) / float64(n))
	h := tQuantile(1-tail(conf), float64(n-1)) * se
	return mean, Interval{Lo: mean - h, Hi: mean + h}, n
}

// tQuantile is the P-quantile of Student's t with df degrees of freedom,
// by bisection on tCDF (monotone), to float64 resolution.
func tQuantile(P, df float64) float64 {
	switch {
	case math.IsNaN(P) || df <= 0:
		return math.NaN()
	case P <= 0:
		return math.Inf(-1)
	case P >= 1:
		return math.Inf(1)
	case P < 0.5:
		return -tQuantile(1-P, df)
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < P {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return hi
		}
	}
	for range 200 {
		m := (lo + hi) / 2
		if m == lo || m == hi {
			break
		}
		if tCDF(m, df) < P {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

// tCDF is Student's t distribution function, through the regularized
// incomplete beta function: P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2).
func tCDF(t, df float64) float64 {
	x := df / (df + t*t)
	upper := 0.5 * regIncBeta(df/2, 0.5, x) // P(T > |t|)
	if t >= 0 {
		return 1 - upper
	}
	return upper
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated by its continued fraction (modified Lentz), on the side of
// the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	case x > (a+1)/(a+b+2):
		return 1 - regIncBeta(b, a, 1-x)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	return front * betaCF(a, b, x) / a
}

// betaCF is the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tinyF, eps = 1e-300, 1e-16
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tinyF {
		d = tinyF
	}
	d = 1 / d
	h := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d, c = lentz(d, c, num)
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d, c = lentz(d, c, num)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// lentz is one step of the modified Lentz recurrence for coefficient num.
func lentz(d, c, num float64) (float64, float64) {
	const tinyF = 1e-300
	d = 1 + num*d
	if math.Abs(d) < tinyF {
		d = tinyF
	}
	c = 1 + num/c
	if math.Abs(c) < tinyF {
		c = tinyF
	}
	return 1 / d, c
}
