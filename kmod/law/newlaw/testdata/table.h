#define RENO_INT_PARAMS(P)							\
	P(RENO_INT, qlen_thresh_bytes, qlen_thresh_bytes, "bytes", 30000, 1000, 1000000000, 0, \
	  "a hop's queue above this halves the window, once per window")	\
	P(RENO_INT, init_cwnd_segs, init_cwnd_segs, "segments", 10, 1, 16384, 1, \
	  "initial window, at most max_cwnd_bytes/65535")			\
	P(RENO_INT, max_cwnd_bytes, max_cwnd_bytes, "bytes", 16777216, 65535, 1073741824, 1, \
	  "window cap, at least init_cwnd_segs*65535")				\
	LAW_INT_AGE_PARAM(P, RENO_INT)

