// AscendC host layer: the fields of the tiling structures of AscendC's APIs (the Matmul API's
// TCubeTiling, the advanced APIs' SoftMaxTiling, LayerNormTiling, ...), in order, as X-macro
// lists: kernel_tiling/kernel_tiling.h makes the kernel-side structs of them, tiling/tiling_api.h
// the host-side classes (set_x/get_x, SaveToBuffer), so that both sides share one layout.
// Each list calls F(type, name) per field.
#ifndef ASCENDC_HOST_TILING_FIELDS_H
#define ASCENDC_HOST_TILING_FIELDS_H

#define ASCENDC_HOST_FIELDS_TCubeTiling(F) \
    F(int32_t, usedCoreNum) \
    F(int32_t, M) \
    F(int32_t, N) \
    F(int32_t, Ka) \
    F(int32_t, Kb) \
    F(int32_t, singleCoreM) \
    F(int32_t, singleCoreN) \
    F(int32_t, singleCoreK) \
    F(int32_t, baseM) \
    F(int32_t, baseN) \
    F(int32_t, baseK) \
    F(int32_t, depthA1) \
    F(int32_t, depthB1) \
    F(int32_t, stepM) \
    F(int32_t, stepN) \
    F(int32_t, isBias) \
    F(int32_t, transLength) \
    F(int32_t, iterateOrder) \
    F(int32_t, shareMode) \
    F(int32_t, shareL1Size) \
    F(int32_t, shareL0CSize) \
    F(int32_t, shareUbSize) \
    F(int32_t, batchM) \
    F(int32_t, batchN) \
    F(int32_t, singleBatchM) \
    F(int32_t, singleBatchN) \
    F(int32_t, stepKa) \
    F(int32_t, stepKb) \
    F(int32_t, depthAL1CacheUB) \
    F(int32_t, depthBL1CacheUB) \
    F(int32_t, dbL0A) \
    F(int32_t, dbL0B) \
    F(int32_t, dbL0C) \
    F(int32_t, ALayoutInfoB) \
    F(int32_t, ALayoutInfoS) \
    F(int32_t, ALayoutInfoN) \
    F(int32_t, ALayoutInfoG) \
    F(int32_t, ALayoutInfoD) \
    F(int32_t, BLayoutInfoB) \
    F(int32_t, BLayoutInfoS) \
    F(int32_t, BLayoutInfoN) \
    F(int32_t, BLayoutInfoG) \
    F(int32_t, BLayoutInfoD) \
    F(int32_t, CLayoutInfoB) \
    F(int32_t, CLayoutInfoS1) \
    F(int32_t, CLayoutInfoN) \
    F(int32_t, CLayoutInfoG) \
    F(int32_t, CLayoutInfoS2) \
    F(int32_t, BatchNum) \
    F(int32_t, mxTypePara)

#define ASCENDC_HOST_FIELDS_SoftMaxTiling(F) \
    F(uint32_t, srcM) \
    F(uint32_t, srcK) \
    F(uint32_t, srcSize) \
    F(uint32_t, outMaxM) \
    F(uint32_t, outMaxK) \
    F(uint32_t, outMaxSize) \
    F(uint32_t, splitM) \
    F(uint32_t, splitK) \
    F(uint32_t, splitSize) \
    F(uint32_t, reduceM) \
    F(uint32_t, reduceK) \
    F(uint32_t, reduceSize) \
    F(uint32_t, rangeM) \
    F(uint32_t, tailM) \
    F(uint32_t, tailSplitSize) \
    F(uint32_t, tailReduceSize)

#define ASCENDC_HOST_FIELDS_LogSoftMaxTiling(F) \
    F(uint32_t, srcM) \
    F(uint32_t, srcK) \
    F(uint32_t, srcSize) \
    F(uint32_t, outMaxM) \
    F(uint32_t, outMaxK) \
    F(uint32_t, outMaxSize) \
    F(uint32_t, splitM) \
    F(uint32_t, splitK) \
    F(uint32_t, splitSize) \
    F(uint32_t, reduceM) \
    F(uint32_t, reduceK) \
    F(uint32_t, reduceSize) \
    F(uint32_t, rangeM) \
    F(uint32_t, tailM) \
    F(uint32_t, tailSplitSize) \
    F(uint32_t, tailReduceSize)

#define ASCENDC_HOST_FIELDS_BatchNormTiling(F) \
    F(uint32_t, originalBLength) \
    F(uint32_t, meanVarSize) \
    F(uint32_t, meanTmpTensorPos) \
    F(uint32_t, varianceTmpTensorPos) \
    F(uint32_t, tmpBufSize) \
    F(uint32_t, oneTmpSize) \
    F(uint32_t, firstTmpStartPos) \
    F(uint32_t, secondTmpStartPos) \
    F(uint32_t, thirdTmpStartPos) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, meanVarTailSize) \
    F(uint32_t, meanVarTailPos) \
    F(uint32_t, bshCurLength) \
    F(uint32_t, shCurLength) \
    F(float, firstDimValueBack) \
    F(uint32_t, castHalfRepStride) \
    F(uint32_t, shCurLengthBlockNum) \
    F(uint32_t, castHalfOutRepStride)

#define ASCENDC_HOST_FIELDS_DeepNormTiling(F) \
    F(uint32_t, bLength) \
    F(uint32_t, sLength) \
    F(uint32_t, hLength) \
    F(uint32_t, originalHLength) \
    F(uint32_t, inputXSize) \
    F(uint32_t, meanVarSize) \
    F(uint32_t, numberOfTmpBuf) \
    F(uint32_t, meanTmpTensorPos) \
    F(uint32_t, meanTmpTensorSize) \
    F(uint32_t, varianceTmpTensorPos) \
    F(uint32_t, varianceTmpTensorSize) \
    F(uint32_t, tmpBufSize) \
    F(uint32_t, oneTmpSize) \
    F(uint32_t, firstTmpStartPos) \
    F(uint32_t, secondTmpStartPos) \
    F(uint32_t, thirdTmpStartPos) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputRoundSize) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, meanVarRoundSize) \
    F(uint32_t, meanVarTailSize) \
    F(uint32_t, meanVarTailPos) \
    F(uint32_t, bshCurLength) \
    F(uint32_t, bsCurLength) \
    F(float, lastDimValueBack)

#define ASCENDC_HOST_FIELDS_GroupNormTiling(F) \
    F(uint32_t, n) \
    F(uint32_t, c) \
    F(uint32_t, hw) \
    F(uint32_t, g) \
    F(uint32_t, d) \
    F(uint32_t, hwAlignSize) \
    F(uint32_t, dhwAlignSize) \
    F(uint32_t, inputXSize) \
    F(uint32_t, meanVarSize) \
    F(uint32_t, numberOfTmpBuf) \
    F(uint32_t, meanTmpTensorPos) \
    F(uint32_t, meanTmpTensorSize) \
    F(uint32_t, varianceTmpTensorPos) \
    F(uint32_t, varianceTmpTensorSize) \
    F(uint32_t, tmpBufSize) \
    F(uint32_t, oneTmpSize) \
    F(uint32_t, firstTmpStartPos) \
    F(uint32_t, secondTmpStartPos) \
    F(uint32_t, thirdTmpStartPos) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputRoundSize) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, meanVarRoundSize) \
    F(uint32_t, meanVarTailSize) \
    F(uint32_t, meanVarTailPos) \
    F(uint32_t, bshCurLength) \
    F(uint32_t, bsCurLength) \
    F(float, factor) \
    F(bool, smallShape)

#define ASCENDC_HOST_FIELDS_LayerNormGradBetaTiling(F) \
    F(uint32_t, stackBufferSize) \
    F(uint32_t, bLength) \
    F(uint32_t, sLength) \
    F(uint32_t, hLength) \
    F(uint32_t, originalHLength) \
    F(uint32_t, bshLength) \
    F(uint32_t, bsLength) \
    F(uint32_t, oneCalSize) \
    F(uint32_t, numberOfTmpBuf) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, bsTailSize) \
    F(uint32_t, bshCurLength) \
    F(uint32_t, bsCurLength) \
    F(uint32_t, gammaTempTensorPos) \
    F(uint32_t, betaTempTensorPos) \
    F(uint32_t, inputDyTmpTensorPos) \
    F(uint32_t, resForGammaTmpTensorPos) \
    F(uint32_t, reserved)

#define ASCENDC_HOST_FIELDS_LayerNormGradTiling(F) \
    F(uint32_t, stackBufferSize) \
    F(uint32_t, bLength) \
    F(uint32_t, sLength) \
    F(uint32_t, hLength) \
    F(uint32_t, originalHLength) \
    F(uint32_t, oneCalSize) \
    F(uint32_t, nohCalSize) \
    F(uint32_t, loopNum) \
    F(uint32_t, tailSize) \
    F(uint32_t, nohTailSize) \
    F(uint32_t, tmpTensorBSHPos) \
    F(uint32_t, tmpTensorBSHSize) \
    F(uint32_t, pdVarTensorPos) \
    F(uint32_t, pdVarTensorSize) \
    F(uint32_t, pdMeanTensorPos) \
    F(uint32_t, pdMeanTensorSize) \
    F(uint32_t, x1TensorPos) \
    F(uint32_t, x1TensorSize) \
    F(uint32_t, x2TensorPos) \
    F(uint32_t, x2TensorSize) \
    F(uint32_t, x3TensorPos) \
    F(uint32_t, x3TensorSize) \
    F(uint32_t, tmpTensorPos) \
    F(uint32_t, tmpTensorSize) \
    F(uint32_t, tmpTensor1Pos) \
    F(uint32_t, tmpTensor1Size) \
    F(uint32_t, tmpTensor2Pos) \
    F(uint32_t, tmpTensor2Size) \
    F(uint32_t, lastDimValueBack) \
    F(uint32_t, lastDimValueBackMulTwo)

#define ASCENDC_HOST_FIELDS_LayerNormTiling(F) \
    F(uint32_t, bLength) \
    F(uint32_t, sLength) \
    F(uint32_t, hLength) \
    F(uint32_t, originalHLength) \
    F(uint32_t, inputXSize) \
    F(uint32_t, meanVarSize) \
    F(uint32_t, numberOfTmpBuf) \
    F(uint32_t, meanTmpTensorPos) \
    F(uint32_t, meanTmpTensorSize) \
    F(uint32_t, varianceTmpTensorPos) \
    F(uint32_t, varianceTmpTensorSize) \
    F(uint32_t, tmpBufSize) \
    F(uint32_t, oneTmpSize) \
    F(uint32_t, firstTmpStartPos) \
    F(uint32_t, secondTmpStartPos) \
    F(uint32_t, thirdTmpStartPos) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputRoundSize) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, meanVarRoundSize) \
    F(uint32_t, meanVarTailSize) \
    F(uint32_t, meanVarTailPos) \
    F(uint32_t, bshCurLength) \
    F(uint32_t, bsCurLength) \
    F(float, lastDimValueBack)

#define ASCENDC_HOST_FIELDS_LayerNormSeparateTiling(F) \
    F(uint32_t, aLength) \
    F(uint32_t, rLength) \
    F(uint32_t, halfAddRepeatTimes) \
    F(uint32_t, rHeadLength) \
    F(float, k2Rec) \
    F(float, k2RRec) \
    F(uint32_t, inputXSize) \
    F(uint32_t, meanVarSize) \
    F(uint32_t, numberOfTmpBuf) \
    F(uint32_t, varianceTmpTensorPos) \
    F(uint32_t, varianceTmpTensorSize) \
    F(uint32_t, tmpBufSize) \
    F(uint32_t, oneTmpSize) \
    F(uint32_t, firstTmpStartPos) \
    F(uint32_t, secondTmpStartPos) \
    F(uint32_t, thirdTmpStartPos) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputRoundSize) \
    F(uint32_t, inputTailSize) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, meanVarRoundSize) \
    F(uint32_t, meanVarTailSize) \
    F(uint32_t, meanVarTailPos) \
    F(uint32_t, arCurLength) \
    F(uint32_t, aCurLength) \
    F(float, rValueBack)

#define ASCENDC_HOST_FIELDS_RmsNormTiling(F) \
    F(uint32_t, bLength) \
    F(uint32_t, sLength) \
    F(uint32_t, hLength) \
    F(uint32_t, originalHLength) \
    F(float, reciprocalOfHLength) \
    F(uint32_t, mainBshLength) \
    F(uint32_t, mainBsLength) \
    F(uint32_t, mainBsLengthAlign) \
    F(uint32_t, loopRound) \
    F(uint32_t, inputTailPos) \
    F(uint32_t, tailBshLength) \
    F(uint32_t, tailBsLength)

#define ASCENDC_HOST_FIELDS_UnPadTiling(F) \
    F(uint32_t, srcHeight) \
    F(uint32_t, srcWidth) \
    F(uint32_t, tmpBuffer1BlockNum) \
    F(uint32_t, tmpBuffer1RowNum) \
    F(uint32_t, tmpBuffer2Offset) \
    F(uint32_t, widthTiling) \
    F(uint32_t, widthFractal) \
    F(uint32_t, widthFractalTail)

#define ASCENDC_HOST_FIELDS_PadTiling(F) \
    F(uint32_t, srcHeight) \
    F(uint32_t, srcWidth) \
    F(uint32_t, srcOriWidth) \
    F(uint32_t, widthWithoutLastBlock) \
    F(uint32_t, blocksPerRow) \
    F(uint32_t, heightTiling) \
    F(uint32_t, heightFractal) \
    F(uint32_t, heightFractalTail) \
    F(uint32_t, mainLoopOffset) \
    F(uint32_t, tailBlockOffset) \
    F(uint32_t, tmpBuffer1BlockNum) \
    F(uint32_t, tmpBuffer1RowNum) \
    F(uint32_t, tmpBuffer2Offset) \
    F(uint32_t, widthTiling) \
    F(uint32_t, widthFractal) \
    F(uint32_t, widthFractalTail) \
    F(uint32_t, widthFractalTailAlingned) \
    F(uint32_t, brcbTiling) \
    F(uint32_t, brcbFractal) \
    F(uint32_t, brcbFractalTail) \
    F(uint32_t, maxRepeatTimes) \
    F(uint32_t, brcbTilingRepeatTimes) \
    F(uint32_t, brcbTilingRepeatTimesTail) \
    F(uint32_t, brcbFractalTailRepeatTimes) \
    F(uint32_t, brcbFractalTailRepeatTimesTail) \
    F(uint32_t, reserved)

#define ASCENDC_HOST_FIELDS_TopkTiling(F) \
    F(int32_t, tmpLocalSize) \
    F(int32_t, allDataSize) \
    F(int32_t, innerDataSize) \
    F(uint32_t, sortRepeat) \
    F(int32_t, mrgSortRepeat) \
    F(int32_t, kAlignFourBytes) \
    F(int32_t, kAlignTwoBytes) \
    F(int32_t, maskOffset) \
    F(int32_t, maskVreducev2FourBytes) \
    F(int32_t, maskVreducev2TwoBytes) \
    F(int32_t, mrgSortSrc1offset) \
    F(int32_t, mrgSortSrc2offset) \
    F(int32_t, mrgSortSrc3offset) \
    F(int32_t, mrgSortTwoQueueSrc1Offset) \
    F(int32_t, mrgFourQueueTailPara1) \
    F(int32_t, mrgFourQueueTailPara2) \
    F(int32_t, srcIndexOffset) \
    F(uint32_t, copyUbToUbBlockCount) \
    F(int32_t, topkMrgSrc1MaskSizeOffset) \
    F(int32_t, topkNSmallSrcIndexOffset) \
    F(uint32_t, vreduceValMask0) \
    F(uint32_t, vreduceValMask1) \
    F(uint32_t, vreduceIdxMask0) \
    F(uint32_t, vreduceIdxMask1) \
    F(uint16_t, vreducehalfValMask0) \
    F(uint16_t, vreducehalfValMask1) \
    F(uint16_t, vreducehalfValMask2) \
    F(uint16_t, vreducehalfValMask3) \
    F(uint16_t, vreducehalfValMask4) \
    F(uint16_t, vreducehalfValMask5) \
    F(uint16_t, vreducehalfValMask6) \
    F(uint16_t, vreducehalfValMask7)

#define ASCENDC_HOST_FIELDS_ConfusionTransposeTiling(F) \
    F(uint32_t, param0) \
    F(uint32_t, param1) \
    F(uint32_t, param2) \
    F(uint32_t, param3) \
    F(uint32_t, param4) \
    F(uint32_t, param5) \
    F(uint32_t, param6) \
    F(uint32_t, param7) \
    F(uint32_t, param8) \
    F(uint32_t, param9) \
    F(uint32_t, param10) \
    F(uint32_t, param11) \
    F(uint32_t, param12) \
    F(uint32_t, param13) \
    F(uint32_t, param14) \
    F(uint32_t, param15) \
    F(uint32_t, param16) \
    F(uint32_t, param17)

// Every tiling structure: S(name).
#define ASCENDC_HOST_TILING_STRUCTS(S) \
    S(TCubeTiling) \
    S(SoftMaxTiling) \
    S(LogSoftMaxTiling) \
    S(BatchNormTiling) \
    S(DeepNormTiling) \
    S(GroupNormTiling) \
    S(LayerNormGradBetaTiling) \
    S(LayerNormGradTiling) \
    S(LayerNormTiling) \
    S(LayerNormSeparateTiling) \
    S(RmsNormTiling) \
    S(UnPadTiling) \
    S(PadTiling) \
    S(TopkTiling) \
    S(ConfusionTransposeTiling)

#endif
