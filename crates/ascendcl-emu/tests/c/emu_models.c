/* Model runtime instances through the C library: a built model on a persistent stream whose
 * label switch reads its branch index from device memory when the model runs, and a captured
 * model whose task group is updated between executions. */
#include <stdint.h>
#include <string.h>
#include "acl/acl.h"
#include "emu_check.h"

#ifndef ACL_MODEL_STREAM_FLAG_HEAD
#define ACL_MODEL_STREAM_FLAG_HEAD 0x00000000U
#endif

static uint8_t first_byte(void *dev) {
    uint8_t b = 0;
    EXPECT(aclrtMemcpy(&b, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return b;
}

static void built_model_with_a_label_switch(void) {
    aclrtStream persistent = NULL, exec = NULL;
    EXPECT(aclrtCreateStreamWithConfig(&persistent, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&exec), ACL_SUCCESS);
    aclmdlRI model = NULL;
    EXPECT(aclmdlRIBuildBegin(&model, 0), ACL_SUCCESS);
    EXPECT(aclmdlRIBindStream(model, persistent, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    /* A plain stream cannot be bound, nor the same stream twice. */
    EXPECT(aclmdlRIBindStream(model, exec, ACL_MODEL_STREAM_FLAG_HEAD), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclmdlRIBindStream(model, persistent, ACL_MODEL_STREAM_FLAG_HEAD), ACL_ERROR_RT_STREAM_MODEL);

    void *index = NULL, *out = NULL;
    EXPECT(aclrtMalloc(&index, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&out, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtLabel labels[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        EXPECT(aclrtCreateLabel(&labels[i]), ACL_SUCCESS);
    }
    /* A label goes in a list before it is set. */
    EXPECT(aclrtSetLabel(labels[0], persistent), ACL_ERROR_RT_INTERNAL_ERROR);
    aclrtLabelList list = NULL;
    EXPECT(aclrtCreateLabelList(labels, 2, &list), ACL_SUCCESS);
    EXPECT(aclrtSwitchLabelByIndex(index, 2, list, persistent), ACL_SUCCESS);
    EXPECT(aclrtSwitchLabelByIndex(index, 2, list, exec), ACL_ERROR_RT_STREAM_MODEL);
    /* Label 0: out = 0xA0...; label 1: out = 0xB1... */
    EXPECT(aclrtSetLabel(labels[0], persistent), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(out, 4, 0xA0, 4, persistent), ACL_SUCCESS);
    EXPECT(aclmdlRIEndTask(model, persistent), ACL_SUCCESS);
    EXPECT(aclrtSetLabel(labels[1], persistent), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(out, 4, 0xB1, 4, persistent), ACL_SUCCESS);
    EXPECT(aclmdlRIEndTask(model, persistent), ACL_SUCCESS);
    EXPECT(aclmdlRIBuildEnd(model, NULL), ACL_SUCCESS);
    /* Nothing ran while building. */
    EXPECT(aclrtMemset(out, 4, 0, 4), ACL_SUCCESS);
    CHECK(first_byte(out) == 0);

    /* The index is read when the model runs: 1, then 0, then 9 (beyond: the last label). */
    const uint32_t branches[3] = {1, 0, 9};
    const uint8_t expect[3] = {0xB1, 0xA0, 0xB1};
    for (int i = 0; i < 3; i++) {
        EXPECT(aclrtMemcpy(index, 4, &branches[i], 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        if (i == 1) {
            EXPECT(aclmdlRIExecute(model, 5000), ACL_SUCCESS);
        } else {
            EXPECT(aclmdlRIExecuteAsync(model, exec), ACL_SUCCESS);
            EXPECT(aclrtSynchronizeStream(exec), ACL_SUCCESS);
        }
        CHECK(first_byte(out) == expect[i]);
    }
    EXPECT(aclmdlRIExecuteAsync(model, persistent), ACL_ERROR_RT_PARAM_INVALID);

    EXPECT(aclmdlRIUnbindStream(model, persistent), ACL_SUCCESS);
    EXPECT(aclmdlRIDestroy(model), ACL_SUCCESS);
    EXPECT(aclrtDestroyLabelList(list), ACL_SUCCESS);
    for (int i = 0; i < 2; i++) {
        EXPECT(aclrtDestroyLabel(labels[i]), ACL_SUCCESS);
    }
    EXPECT(aclrtFree(index), ACL_SUCCESS);
    EXPECT(aclrtFree(out), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(exec), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(persistent), ACL_SUCCESS);
}

static void captured_model_with_an_update(void) {
    aclrtStream stream = NULL, update = NULL;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&update), ACL_SUCCESS);
    void *dev = NULL, *host = NULL;
    EXPECT(aclrtMalloc(&dev, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMallocHost(&host, 16), ACL_SUCCESS);
    memset(host, 7, 16);
    EXPECT(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(dev, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    aclrtTaskGrp group = NULL;
    EXPECT(aclmdlRICaptureTaskGrpBegin(stream), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(dev, 4, 1, 4, stream), ACL_SUCCESS);
    EXPECT(aclmdlRICaptureTaskGrpEnd(stream, &group), ACL_SUCCESS);
    aclmdlRI model = NULL;
    EXPECT(aclmdlRICaptureEnd(stream, &model), ACL_SUCCESS);
    EXPECT(aclmdlRIExecuteAsync(model, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(first_byte(dev) == 1);
    /* The update replaces the group's memset when the update stream runs it. */
    EXPECT(aclmdlRICaptureTaskUpdateBegin(update, group), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(dev, 4, 2, 4, update), ACL_SUCCESS);
    EXPECT(aclmdlRICaptureTaskUpdateEnd(update), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(update), ACL_SUCCESS);
    EXPECT(aclmdlRIExecuteAsync(model, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(first_byte(dev) == 2);
    EXPECT(aclmdlRIDestroy(model), ACL_SUCCESS);
    EXPECT(aclrtFree(dev), ACL_SUCCESS);
    EXPECT(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(update), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream), ACL_SUCCESS);
}

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    built_model_with_a_label_switch();
    captured_model_with_an_update();
    /* Host-function subscription is for IPV350-class SoCs: the default SoC answers 207000. */
    aclrtStream s = NULL;
    EXPECT(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT(aclrtSubscribeHostFunc(1, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_models");
}
