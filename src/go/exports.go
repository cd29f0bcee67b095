package planctl

/*
#include "bridge.h"
*/
import "C"

import "runtime/cgo"

// The functions bridge.c calls: libplanctl's callbacks, on the engine's
// loop thread.  data is the runtime/cgo.Handle given at registration.

//export goExecutorStart
func goExecutorStart(job *C.planctl_job, info *C.planctl_task_info, data C.uintptr_t) C.int {
	return cgo.Handle(data).Value().(*executor).start(job, info)
}

//export goExecutorCancel
func goExecutorCancel(job *C.planctl_job, data C.uintptr_t) {
	cgo.Handle(data).Value().(*executor).cancelJob(job)
}

//export goExecutorRelease
func goExecutorRelease(job *C.planctl_job, data C.uintptr_t) {
	releaseJob(job)
}

//export goEngineLog
func goEngineLog(rec *C.planctl_log_record, data C.uintptr_t) {
	cgo.Handle(data).Value().(func(LogRecord))(logRecord(rec))
}
