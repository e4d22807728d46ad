/*
 * The secure C library's bounds-checked functions (see include/securec.h) for an emulator
 * root's lib64/libc_sec.so. Written for ascendcl-rs.
 */
#define _POSIX_C_SOURCE 200809L

#include "securec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a;
    uintptr_t y = (uintptr_t)b;
    return x < y + blen && y < x + alen;
}

errno_t memset_s(void *dest, size_t destMax, int c, size_t count)
{
    if (destMax == 0 || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (dest == NULL) {
        return EINVAL;
    }
    if (count > destMax) {
        memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

static errno_t check_copy(void *dest, size_t destMax, const void *src, size_t count)
{
    if (destMax == 0 || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (dest == NULL) {
        return EINVAL;
    }
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    return EOK;
}

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count)
{
    errno_t rc = check_copy(dest, destMax, src, count);
    if (rc != EOK) {
        return rc;
    }
    if (count == 0 || dest == src) {
        return EOK;
    }
    if (overlaps(dest, count, src, count)) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest, src, count);
    return EOK;
}

errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count)
{
    errno_t rc = check_copy(dest, destMax, src, count);
    if (rc != EOK) {
        return rc;
    }
    memmove(dest, src, count);
    return EOK;
}

/* The checks the string functions share: the capacity, then the destination, then the source
 * (a NULL source empties the destination). */
static errno_t check_string(char *dest, size_t destMax, const char *src)
{
    if (destMax == 0 || destMax > SECUREC_STRING_MAX_LEN) {
        return ERANGE;
    }
    if (dest == NULL) {
        return EINVAL;
    }
    if (src == NULL) {
        dest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    return EOK;
}

/* Copies n characters of src and a NUL to dest (capacity destMax), n + 1 <= destMax. */
static errno_t put(char *dest, size_t destMax, const char *src, size_t n)
{
    if (n + 1 > destMax) {
        dest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (overlaps(dest, n + 1, src, n + 1) && dest != src) {
        dest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memmove(dest, src, n);
    dest[n] = '\0';
    return EOK;
}

errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc)
{
    errno_t rc = check_string(strDest, destMax, strSrc);
    if (rc != EOK) {
        return rc;
    }
    return put(strDest, destMax, strSrc, strnlen(strSrc, destMax));
}

errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    errno_t rc = check_string(strDest, destMax, strSrc);
    if (rc != EOK) {
        return rc;
    }
    if (count > SECUREC_STRING_MAX_LEN) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    return put(strDest, destMax, strSrc, strnlen(strSrc, count < destMax ? count : destMax));
}

/* Appends at most limit characters of src to dest. */
static errno_t append(char *dest, size_t destMax, const char *src, size_t limit)
{
    size_t have = strnlen(dest, destMax);
    if (have == destMax) {
        /* No NUL within the capacity: the destination is not a string that fits. */
        dest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    size_t room = destMax - have;
    size_t n = strnlen(src, limit < room ? limit : room);
    if (n + 1 > room) {
        dest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (overlaps(dest, destMax, src, n + 1)) {
        dest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest + have, src, n);
    dest[have + n] = '\0';
    return EOK;
}

errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc)
{
    errno_t rc = check_string(strDest, destMax, strSrc);
    if (rc != EOK) {
        return rc;
    }
    return append(strDest, destMax, strSrc, SECUREC_STRING_MAX_LEN);
}

errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    errno_t rc = check_string(strDest, destMax, strSrc);
    if (rc != EOK) {
        return rc;
    }
    if (count > SECUREC_STRING_MAX_LEN) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    return append(strDest, destMax, strSrc, count);
}

int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
{
    if (strDest == NULL || format == NULL || destMax == 0 || destMax > SECUREC_STRING_MAX_LEN) {
        if (strDest != NULL && destMax > 0 && destMax <= SECUREC_STRING_MAX_LEN) {
            strDest[0] = '\0';
        }
        return -1;
    }
    int n = vsnprintf(strDest, destMax, format, argList);
    if (n < 0) {
        strDest[0] = '\0';
        return -1;
    }
    if (count < destMax && (size_t)n > count) {
        /* Cut at count characters: the cut string is kept. */
        strDest[count] = '\0';
        return -1;
    }
    if ((size_t)n >= destMax) {
        strDest[0] = '\0';
        return -1;
    }
    return n;
}

int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf_s(strDest, destMax, count, format, ap);
    va_end(ap);
    return n;
}

int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList)
{
    return vsnprintf_s(strDest, destMax, SECUREC_STRING_MAX_LEN, format, argList);
}

int sprintf_s(char *strDest, size_t destMax, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsprintf_s(strDest, destMax, format, ap);
    va_end(ap);
    return n;
}
