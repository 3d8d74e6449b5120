// Package lawload loads, lists and unloads the eBPF struct_ops builds of the
// congestion-control laws (kmod/bpf), reads back the parameters in force and
// records the per-ACK law trace.
//
// A registration outlives the process that made it: its struct_ops link and
// its parameters (the object's .rodata) are pinned under
// PinDir/<law>/ (PinDir/<law>@<name>/ when registered under another name),
// with the build of the object (a one-entry array "build": kbpf.Build). A
// registration made by another build of cclab is stale: Load and Ensure
// refuse it, Reconcile registers the law again.
// Maps the laws share with each other and with the INT host agent are
// pinned by name directly in PinDir: cclab_int_echo (tcopt/int_echo.h),
// cclab_cc_trace and cclab_cc_ctl (the trace).
package lawload
