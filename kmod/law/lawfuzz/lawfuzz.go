// Package lawfuzz compiles the law core with the undefined-behaviour
// sanitizer (gcc's libubsan with halt_on_error: the first finding aborts
// the process) and runs it on raw bytes: the fuzz target of the law
// core. It is a separate package so that cclab itself is not linked with
// the sanitizer.
package lawfuzz

/*
#cgo CFLAGS: -O1 -g -fsanitize=undefined -fno-omit-frame-pointer
#cgo LDFLAGS: -fsanitize=undefined
#include <stdlib.h>
#include "../fuzz.h"

// Every finding is fatal (cgo does not accept -fno-sanitize-recover).
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

// Where the QCN feedback fields start in struct int_echo.
enum { lawfuzz_qcn_off = offsetof(struct int_echo, qcn_count) };

static int lawfuzz_run(int law, const void *p, size_t np, const void *a, size_t na)
{
	return law_fuzz_run(law, (const __u8 *)p, np, (const __u8 *)a, na);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Laws is the number of laws the core has (law ids 1..Laws).
const Laws = int(C.LAW_ID_COUNT)

// RecordSize is the number of bytes one fuzzed ACK takes.
const RecordSize = int(C.LAW_FUZZ_REC)

// EchoQCNOffset is where struct int_echo's QCN fields (qcn_count,
// qcn_key, qcn_fb) start.
const EchoQCNOffset = int(C.lawfuzz_qcn_off)

// ParamsSize is the size of the largest parameter struct.
const ParamsSize = int(C.sizeof_union_law_any_params)

// Outcome of one run.
const (
	OK             = int(C.LAW_FUZZ_OK)
	ParamsRejected = int(C.LAW_FUZZ_PARAMS_REJECTED)
)

// Run runs law over acks (RecordSize bytes each) with parameters whose
// bytes overlay the defaults. It returns OK, ParamsRejected (the law's
// params_check refused them: not a failure) or an error naming the
// output invariant that broke. Undefined behaviour aborts the process.
func Run(law int, params, acks []byte) (int, error) {
	var pp, ap unsafe.Pointer
	if len(params) > 0 {
		pp = C.CBytes(params)
		defer C.free(pp)
	}
	if len(acks) > 0 {
		ap = C.CBytes(acks)
		defer C.free(ap)
	}
	rc := int(C.lawfuzz_run(C.int(law), pp, C.size_t(len(params)), ap, C.size_t(len(acks))))
	switch rc {
	case OK, ParamsRejected:
		return rc, nil
	case int(C.LAW_FUZZ_SEGS_ZERO):
		return rc, fmt.Errorf("law %d: cwnd_segs 0", law)
	case int(C.LAW_FUZZ_ABOVE_CAP):
		return rc, fmt.Errorf("law %d: cwnd above max_cwnd_bytes", law)
	case int(C.LAW_FUZZ_BELOW_MIN):
		return rc, fmt.Errorf("law %d: cwnd below the minimum", law)
	case int(C.LAW_FUZZ_SEGS_MISMATCH):
		return rc, fmt.Errorf("law %d: cwnd_segs is not ceil(cwnd_bytes / mss)", law)
	}
	return rc, fmt.Errorf("law %d: unknown fuzz result %d", law, rc)
}
