/* Streams, events and the runtime's lifecycle through the emulator's libacl_rt.so, as a C user of
 * CANN calls them: the init and finalize callbacks (called by aclInit and aclFinalize), version
 * numbers and CANN attributes, timed event waits (an expired one reported by the next
 * synchronisation) and the event wait status, value writes and waits between two streams,
 * notifies between streams, the stream configuration handles (not supported on any Atlas
 * product: 207000), and stream stop and abort. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "acl/acl.h"
#include "emu_check.h"
#include "emu_gate.h"

/* What the callbacks saw, in call order: a tag per call, and the configuration length. */
static int calls[16];
static size_t call_lens[16];
static int ncalls = 0;
static char last_config[256];
/* The code the init callback tagged `failing_tag` returns. */
static int failing_tag = -1;

/* Reads the configuration as C code may: a NUL-terminated string (the runtime passes a
 * std::string's c_str()) of `len` characters, also when there is no configuration file. */
static aclError on_init(const char *config, size_t len, void *user) {
    int tag = (int)(intptr_t)user;
    if (ncalls < 16) {
        call_lens[ncalls] = len;
        calls[ncalls++] = tag;
    }
    if (config == NULL || strlen(config) != len) {
        fprintf(stderr, "init callback %d: configStr is not a C string of %zu characters\n", tag, len);
        failures++;
        return ACL_SUCCESS;
    }
    snprintf(last_config, sizeof last_config, "%s", config);
    return tag == failing_tag ? 123456 : ACL_SUCCESS;
}

/* A second function, so that ACL_REG_TYPE_OTHER holds two different callbacks. */
static aclError on_init_other(const char *config, size_t len, void *user) { return on_init(config, len, user); }

static aclError on_finalize(void *user) {
    if (ncalls < 16) {
        call_lens[ncalls] = 0;
        calls[ncalls++] = (int)(intptr_t)user;
    }
    return ACL_SUCCESS;
}

static void forget_calls(void) { ncalls = 0; }

/* Whether the calls seen since forget_calls() are exactly `want[0..n)`. */
static int calls_are(const int *want, int n) {
    if (ncalls != n) {
        fprintf(stderr, "%d callback call(s) seen, expected %d\n", ncalls, n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (calls[i] != want[i]) {
            fprintf(stderr, "callback call %d was tag %d, expected %d\n", i, calls[i], want[i]);
            return 0;
        }
    }
    return 1;
}

#define TAG(t) ((void *)(intptr_t)(t))

/* Registers the callbacks of the first aclInit: MODEL (10), OTHER (40, 41), DVPP (30). */
static void register_callbacks(void) {
    emu_section("init and finalize callbacks: registration");
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    /* Registered in another order than they are called. */
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, TAG(40)), ACL_SUCCESS);
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_other, TAG(41)), ACL_SUCCESS);
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_init, TAG(30)), ACL_SUCCESS);
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init, TAG(10)), ACL_SUCCESS);
    /* One callback per type but OTHER. */
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init_other, TAG(11)), ACL_ERROR_INTERNAL_ERROR);
    EXPECT(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, TAG(4)), ACL_SUCCESS);
    EXPECT(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize, TAG(2)), ACL_SUCCESS);
    EXPECT(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize, TAG(3)), ACL_ERROR_INTERNAL_ERROR);
    /* Unregistering what is not registered. */
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_OP_COMPILER, on_init), ACL_ERROR_INTERNAL_ERROR);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init_other), ACL_ERROR_INTERNAL_ERROR);
    EXPECT(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize), ACL_ERROR_INTERNAL_ERROR);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, NULL), ACL_ERROR_INVALID_PARAM);
    (void)aclGetRecentErrMsg();
    forget_calls();
}

/* After the main part: a failing init callback fails aclInit; the configuration file's text
 * reaches the callbacks; a callback registered while initialised runs at once. */
static void callbacks_across_init_and_finalize(void) {
    emu_section("init and finalize callbacks: a failing callback, the configuration text");
    forget_calls();
    failing_tag = 10;
    EXPECT(aclInit(NULL), 123456);
    (void)aclGetRecentErrMsg();
    const int first_only[] = {10};
    CHECK(calls_are(first_only, 1));
    /* Not initialised: there is nothing to finalize. */
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    (void)aclGetRecentErrMsg();
    failing_tag = -1;

    char path[] = "/tmp/emu_stream_events_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char text[] = "{\"dump\": {}}";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    forget_calls();
    EXPECT(aclInit(path), ACL_SUCCESS);
    const int all_inits[] = {10, 30, 40, 41};
    CHECK(calls_are(all_inits, 4));
    CHECK(call_lens[0] == sizeof text - 1 && strcmp(last_config, text) == 0);
    /* A callback registered now runs at once, with the text. */
    forget_calls();
    last_config[0] = '\0';
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_TDT_CHANNEL, on_init, TAG(50)), ACL_SUCCESS);
    const int late[] = {50};
    CHECK(calls_are(late, 1));
    CHECK(strcmp(last_config, text) == 0);
    forget_calls();
    EXPECT(aclFinalize(), ACL_SUCCESS);
    const int finals[] = {2, 4};
    CHECK(calls_are(finals, 2));
    unlink(path);

    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_TDT_CHANNEL, on_init), ACL_SUCCESS);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init), ACL_SUCCESS);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_init), ACL_SUCCESS);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init), ACL_SUCCESS);
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init_other), ACL_SUCCESS);
    EXPECT(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize), ACL_SUCCESS);
    EXPECT(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_finalize), ACL_SUCCESS);
    /* Unregistered: initialising and finalising call nothing. */
    forget_calls();
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    CHECK(ncalls == 0);
}

static void versions_and_attributes(void) {
    emu_section("version numbers and CANN attributes");
    char runtime[] = "runtime", unknown[] = "no-such-package";
    int32_t num = -1;
    EXPECT(aclsysGetVersionNum(runtime, &num), ACL_SUCCESS);
    /* major * 10000000 + minor * 100000 + patch * 1000, from the version string. */
    char str[ACL_PKG_VERSION_MAX_SIZE] = {0};
    EXPECT(aclsysGetVersionStr(runtime, str), ACL_SUCCESS);
    int major = -1, minor = -1, patch = -1;
    CHECK(sscanf(str, "%d.%d.%d", &major, &minor, &patch) == 3);
    CHECK(num == major * 10000000 + minor * 100000 + patch * 1000);
    CHECK(num == 90000000);
    EXPECT(aclsysGetVersionNum(unknown, &num), ACL_ERROR_INVALID_FILE);
    EXPECT(aclsysGetVersionNum(runtime, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclsysGetVersionNum(NULL, &num), ACL_ERROR_INVALID_PARAM);

    const aclCannAttr *list = NULL;
    size_t n = 99;
    EXPECT(aclGetCannAttributeList(&list, &n), ACL_SUCCESS);
    CHECK(list != NULL && n == 2);
    if (list != NULL && n == 2) {
        CHECK(list[0] == ACL_CANN_ATTR_INF_NAN && list[1] == ACL_CANN_ATTR_BF16);
    }
    int32_t v = -1;
    EXPECT(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &v), ACL_SUCCESS);
    CHECK(v == 1);
    EXPECT(aclGetCannAttribute(ACL_CANN_ATTR_JIT_COMPILE, &v), ACL_SUCCESS);
    CHECK(v == 0);
    EXPECT(aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetCannAttribute(ACL_CANN_ATTR_INF_NAN, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetCannAttributeList(NULL, &n), ACL_ERROR_INVALID_PARAM);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void set_flag(void *flag) { *(volatile int *)flag = 1; }

static aclrtEventWaitStatus wait_status(aclrtEvent e) {
    aclrtEventWaitStatus st = ACL_EVENT_WAIT_STATUS_RESERVED;
    EXPECT(aclrtQueryEventWaitStatus(e, &st), ACL_SUCCESS);
    return st;
}

static aclrtStreamStatus stream_status(aclrtStream s) {
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    EXPECT(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    return st;
}

static void timed_event_waits(void) {
    emu_section("timed event waits: stream order and the wait status");
    aclrtStream producer = NULL, consumer = NULL, other = NULL;
    EXPECT(aclrtCreateStream(&producer), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&consumer), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&other), ACL_SUCCESS);
    aclrtEvent ev = NULL;
    EXPECT(aclrtCreateEvent(&ev), ACL_SUCCESS);
    /* No wait issued: complete. */
    CHECK(wait_status(ev) == ACL_EVENT_WAIT_STATUS_COMPLETE);
    emu_gate gate;
    emu_gate_init(&gate);
    EXPECT(aclrtLaunchHostFunc(producer, emu_gate_wait, &gate), ACL_SUCCESS);
    EXPECT(aclrtRecordEvent(ev, producer), ACL_SUCCESS);
    /* 0: no timeout. */
    EXPECT(aclrtStreamWaitEventWithTimeout(consumer, ev, 0), ACL_SUCCESS);
    volatile int after = 0;
    EXPECT(aclrtLaunchHostFunc(consumer, set_flag, (void *)&after), ACL_SUCCESS);
    CHECK(wait_status(ev) == ACL_EVENT_WAIT_STATUS_NOT_READY);
    CHECK(stream_status(consumer) == ACL_STREAM_STATUS_NOT_READY);
    CHECK(after == 0);
    emu_gate_open(&gate);
    EXPECT(aclrtSynchronizeStream(consumer), ACL_SUCCESS);
    CHECK(after == 1);
    CHECK(wait_status(ev) == ACL_EVENT_WAIT_STATUS_COMPLETE);
    emu_gate_destroy(&gate);

    emu_section("timed event waits and notifies: an expired wait fails at the next synchronisation");
    /* Two waits that expire after 1 s, run side by side: an event wait on `consumer` (its record
     * is held back on `producer`) and a notify wait on `other` (never recorded). */
    emu_gate_init(&gate);
    EXPECT(aclrtLaunchHostFunc(producer, emu_gate_wait, &gate), ACL_SUCCESS);
    EXPECT(aclrtRecordEvent(ev, producer), ACL_SUCCESS);
    aclrtNotify notify = NULL;
    EXPECT(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    double start = now_s();
    EXPECT(aclrtStreamWaitEventWithTimeout(consumer, ev, 1), ACL_SUCCESS);
    EXPECT(aclrtWaitAndResetNotify(notify, other, 1), ACL_SUCCESS);
    after = 0;
    EXPECT(aclrtLaunchHostFunc(consumer, set_flag, (void *)&after), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(consumer), ACL_ERROR_RT_TASK_TIMEOUT);
    CHECK(now_s() - start >= 1.0);
    EXPECT(aclrtSynchronizeStream(other), ACL_ERROR_RT_TASK_TIMEOUT);
    (void)aclGetRecentErrMsg();
    /* CONTINUE mode: the task after the wait ran, and the failure is reported once. */
    CHECK(after == 1);
    EXPECT(aclrtSynchronizeStream(consumer), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(other), ACL_SUCCESS);
    CHECK(wait_status(ev) == ACL_EVENT_WAIT_STATUS_COMPLETE);
    emu_gate_open(&gate);
    EXPECT(aclrtSynchronizeStream(producer), ACL_SUCCESS);
    emu_gate_destroy(&gate);

    emu_section("timed event waits: bad input, in the runtime's order");
    aclrtEvent dead = NULL;
    EXPECT(aclrtCreateEvent(&dead), ACL_SUCCESS);
    EXPECT(aclrtDestroyEvent(dead), ACL_SUCCESS);
    /* The timeout is checked first, even before a NULL event. */
    EXPECT(aclrtStreamWaitEventWithTimeout(consumer, NULL, -1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtStreamWaitEventWithTimeout(consumer, dead, 1), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtStreamWaitEventWithTimeout(consumer, NULL, 1), ACL_ERROR_RT_PARAM_INVALID);
    /* NULL is the default stream. */
    EXPECT(aclrtStreamWaitEventWithTimeout(NULL, ev, 1), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    aclrtEventWaitStatus st = ACL_EVENT_WAIT_STATUS_RESERVED;
    EXPECT(aclrtQueryEventWaitStatus(NULL, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtQueryEventWaitStatus(ev, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtQueryEventWaitStatus(dead, &st), ACL_ERROR_RT_INVALID_HANDLE);
    /* IPC events have no wait status. */
    aclrtEvent ipc = NULL;
    EXPECT(aclrtCreateEventWithFlag(&ipc, ACL_EVENT_IPC), ACL_SUCCESS);
    EXPECT(aclrtQueryEventWaitStatus(ipc, &st), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtDestroyEvent(ipc), ACL_SUCCESS);

    EXPECT(aclrtDestroyNotify(notify), ACL_SUCCESS);
    EXPECT(aclrtDestroyEvent(ev), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(producer), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(consumer), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(other), ACL_SUCCESS);
}

static uint64_t word_of(const void *dev) {
    uint64_t w = 0;
    EXPECT(aclrtMemcpy(&w, sizeof w, dev, sizeof w, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return w;
}

/* A wait with `flag` and `value` on `waiter` stays blocked after `writer` writes `blocked` and
 * is released by `release`. */
static void wait_case(aclrtStream waiter, aclrtStream writer, void *word, uint32_t flag, uint64_t value,
                      uint64_t blocked, uint64_t release) {
    EXPECT(aclrtValueWrite(word, blocked, 0, writer), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(writer), ACL_SUCCESS);
    EXPECT(aclrtValueWait(word, value, flag, waiter), ACL_SUCCESS);
    volatile int after = 0;
    EXPECT(aclrtLaunchHostFunc(waiter, set_flag, (void *)&after), ACL_SUCCESS);
    /* The word cannot change meanwhile: the wait can only be pending. */
    CHECK(stream_status(waiter) == ACL_STREAM_STATUS_NOT_READY);
    CHECK(after == 0);
    EXPECT(aclrtValueWrite(word, release, 0, writer), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    CHECK(after == 1);
    CHECK(word_of(word) == release);
}

static void value_writes_and_waits(void) {
    emu_section("value writes and waits between two streams");
    aclrtStream waiter = NULL, writer = NULL;
    EXPECT(aclrtCreateStream(&waiter), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&writer), ACL_SUCCESS);
    void *word = NULL;
    EXPECT(aclrtMalloc(&word, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    wait_case(waiter, writer, word, ACL_STREAM_WAIT_VALUE_GEQ, 10, 9, 10);
    /* GEQ is wrap-around safe: a counter that wrapped past the value is at least the value. */
    wait_case(waiter, writer, word, ACL_STREAM_WAIT_VALUE_GEQ, UINT64_MAX - 1, UINT64_MAX - 3, 1);
    wait_case(waiter, writer, word, ACL_STREAM_WAIT_VALUE_EQ, 123, 122, 123);
    wait_case(waiter, writer, word, ACL_STREAM_WAIT_VALUE_AND, 0x4, 0x3, 0x6);
    wait_case(waiter, writer, word, ACL_STREAM_WAIT_VALUE_NOR, 0x1, UINT64_MAX, 0x1);
    /* A write lands in stream order, after the work queued before it. */
    emu_gate gate;
    emu_gate_init(&gate);
    EXPECT(aclrtValueWrite(word, 1, 0, writer), ACL_SUCCESS);
    EXPECT(aclrtLaunchHostFunc(writer, emu_gate_wait, &gate), ACL_SUCCESS);
    EXPECT(aclrtValueWrite(word, 2, 0, writer), ACL_SUCCESS);
    EXPECT(aclrtValueWait(word, 2, ACL_STREAM_WAIT_VALUE_EQ, waiter), ACL_SUCCESS);
    CHECK(stream_status(waiter) == ACL_STREAM_STATUS_NOT_READY);
    emu_gate_open(&gate);
    EXPECT(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(writer), ACL_SUCCESS);
    emu_gate_destroy(&gate);

    emu_section("value writes and waits: bad input");
    uint64_t host[2] = {0, 0};
    EXPECT(aclrtValueWrite(NULL, 1, 0, writer), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtValueWrite(word, 1, 1, writer), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtValueWait(word, 1, 4, waiter), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtValueWrite(host, 1, 0, writer), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtValueWait(host, 1, ACL_STREAM_WAIT_VALUE_EQ, waiter), ACL_ERROR_RT_PARAM_INVALID);
    /* The whole 64-bit word must lie in the allocation. */
    EXPECT(aclrtValueWrite((char *)word + 60, 1, 0, writer), ACL_ERROR_RT_PARAM_INVALID);
    /* A wait that is never satisfied ends when its stream is aborted. */
    EXPECT(aclrtValueWait(word, 99, ACL_STREAM_WAIT_VALUE_EQ, waiter), ACL_SUCCESS);
    EXPECT(aclrtStreamAbort(waiter), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    EXPECT(aclrtFree(word), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(waiter), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(writer), ACL_SUCCESS);
}

static void notifies(void) {
    emu_section("notifies between two streams");
    aclrtStream waiter = NULL, recorder = NULL;
    EXPECT(aclrtCreateStream(&waiter), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&recorder), ACL_SUCCESS);
    aclrtNotify n = NULL;
    EXPECT(aclrtCreateNotify(NULL, ACL_NOTIFY_DEFAULT), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtCreateNotify(&n, 2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    uint32_t id = UINT32_MAX;
    EXPECT(aclrtGetNotifyId(n, &id), ACL_SUCCESS);
    EXPECT(aclrtGetNotifyId(n, NULL), ACL_ERROR_INVALID_PARAM);
    /* Two waits; one record releases one of them. (A notify is a flag: two records made before
     * a wait takes the first are one record, so the second record waits for the first wait.) */
    emu_gate first;
    emu_gate_init(&first);
    volatile int hits = 0;
    EXPECT(aclrtWaitAndResetNotify(n, waiter, 0), ACL_SUCCESS);
    EXPECT(aclrtLaunchHostFunc(waiter, emu_gate_open_task, &first), ACL_SUCCESS);
    EXPECT(aclrtWaitAndResetNotify(n, waiter, 0), ACL_SUCCESS);
    EXPECT(aclrtLaunchHostFunc(waiter, set_flag, (void *)&hits), ACL_SUCCESS);
    CHECK(stream_status(waiter) == ACL_STREAM_STATUS_NOT_READY);
    EXPECT(aclrtRecordNotify(n, recorder), ACL_SUCCESS);
    /* Returns once the first wait took the record. */
    emu_gate_wait(&first);
    /* The second wait still holds the stream: its host function has not run. */
    CHECK(stream_status(waiter) == ACL_STREAM_STATUS_NOT_READY && hits == 0);
    EXPECT(aclrtRecordNotify(n, recorder), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    CHECK(hits == 1);
    emu_gate_destroy(&first);
    /* A record made before the wait is kept until a wait takes it. */
    EXPECT(aclrtRecordNotify(n, recorder), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(recorder), ACL_SUCCESS);
    EXPECT(aclrtWaitAndResetNotify(n, waiter, 5), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    /* Bad handles: a destroyed stream, a stream passed as a notify. */
    aclrtStream dead = NULL;
    EXPECT(aclrtCreateStream(&dead), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(dead), ACL_SUCCESS);
    EXPECT(aclrtRecordNotify(n, dead), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtWaitAndResetNotify(n, dead, 0), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtRecordNotify((aclrtNotify)waiter, recorder), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtRecordNotify(NULL, recorder), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyNotify(n), ACL_SUCCESS);
    EXPECT(aclrtDestroyNotify(n), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtDestroyStream(waiter), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(recorder), ACL_SUCCESS);
}

static void stream_configuration_handles(void) {
    emu_section("stream configuration handles: not supported on any Atlas product");
    (void)aclGetRecentErrMsg();
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    CHECK(h == NULL);
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "aclrtCreateStreamConfigHandle") != NULL);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    aclrtStreamConfigHandle cfg;
    memset(&cfg, 0, sizeof cfg);
    uint32_t flags = 0;
    EXPECT(aclrtSetStreamConfigOpt(&cfg, ACL_RT_STREAM_FLAG, &flags, sizeof flags), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    aclrtStream s = NULL;
    EXPECT(aclrtCreateStreamV2(&s, &cfg), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(s == NULL);
    EXPECT(aclrtDestroyStreamConfigHandle(&cfg), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    (void)aclGetRecentErrMsg();
}

static void count_run(void *counter) { (*(volatile int *)counter)++; }

static void stop_and_abort(void) {
    emu_section("stream stop and abort");
    EXPECT(aclrtStreamStop(NULL), ACL_ERROR_RT_PARAM_INVALID);
    aclrtStream dead = NULL;
    EXPECT(aclrtCreateStream(&dead), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(dead), ACL_SUCCESS);
    EXPECT(aclrtStreamStop(dead), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtStreamAbort(dead), ACL_ERROR_RT_INVALID_HANDLE);

    aclrtStream s = NULL;
    EXPECT(aclrtCreateStream(&s), ACL_SUCCESS);
    emu_gate gate;
    emu_gate_init(&gate);
    volatile int runs = 0;
    EXPECT(aclrtLaunchHostFunc(s, emu_gate_wait, &gate), ACL_SUCCESS);
    for (int i = 0; i < 5; i++) {
        EXPECT(aclrtLaunchHostFunc(s, count_run, (void *)&runs), ACL_SUCCESS);
    }
    /* Stopped: the queue is held, and a synchronisation reports 507000 at once. */
    EXPECT(aclrtStreamStop(s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
    (void)aclGetRecentErrMsg();
    CHECK(stream_status(s) == ACL_STREAM_STATUS_NOT_READY);
    emu_gate_open(&gate);
    /* Aborted: the queue is discarded (after the running task) and the stream works again. */
    EXPECT(aclrtStreamAbort(s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(runs == 0);
    EXPECT(aclrtLaunchHostFunc(s, count_run, (void *)&runs), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(runs == 1);
    emu_gate_destroy(&gate);
    /* A stopped stream can be destroyed. */
    EXPECT(aclrtStreamStop(s), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(s), ACL_SUCCESS);
    /* The default stream (NULL) can be aborted. */
    EXPECT(aclrtStreamAbort(NULL), ACL_SUCCESS);
}

int main(void) {
    register_callbacks();
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    /* MODEL, then DVPP, then OTHER in registration order; no configuration file: no text. */
    const int inits[] = {10, 30, 40, 41};
    CHECK(calls_are(inits, 4));
    CHECK(call_lens[0] == 0 && call_lens[3] == 0);
    forget_calls();
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    versions_and_attributes();
    timed_event_waits();
    value_writes_and_waits();
    notifies();
    stream_configuration_handles();
    stop_and_abort();
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(ncalls == 0);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    /* Finalize callbacks: MODEL, then OTHER. */
    const int finals[] = {2, 4};
    CHECK(calls_are(finals, 2));
    callbacks_across_init_and_finalize();
    return emu_report("emu_stream_events");
}
