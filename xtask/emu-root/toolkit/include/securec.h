/*
 * The bounds-checked C functions of the secure C library (securec), as CANN installs them
 * (lib64/libc_sec.so), for the programs an emulator root builds. Written for ascendcl-rs from
 * the library's documented interface: each function checks its destination's capacity first
 * and reports, with an errno_t, what it refused; on the errors whose names end in _AND_RESET
 * the destination is reset (zero-filled for the memory functions, an empty string for the
 * string functions) so that a refused copy leaves nothing half written.
 */
#ifndef ASCENDCL_EMU_SECUREC_H
#define ASCENDCL_EMU_SECUREC_H

#include <stdarg.h>
#include <stddef.h>

#ifndef errno_t
typedef int errno_t;
#endif

/* Success. */
#define EOK 0
/* A NULL destination, or a NULL source after the destination was reset. */
#ifndef EINVAL
#define EINVAL 22
#endif
#define EINVAL_AND_RESET (22 | 128)
/* A capacity of 0 or above the maximum; or a source that does not fit (then reset). */
#ifndef ERANGE
#define ERANGE 34
#endif
#define ERANGE_AND_RESET (34 | 128)
/* Source and destination overlap (the destination reset). */
#define EOVERLAP_AND_RESET (54 | 128)

/* The largest capacity a memory or string function accepts. */
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL

#ifdef __cplusplus
extern "C" {
#endif

/* Sets count bytes of dest (capacity destMax) to c; count > destMax fills destMax bytes and is
 * ERANGE_AND_RESET. */
errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
/* Copies count bytes; count > destMax, a NULL source and overlapping ranges reset dest. */
errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
/* As memcpy_s, overlapping ranges allowed. */
errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
/* Copies the string and its NUL; one that does not fit in destMax resets dest. */
errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
/* Copies at most count characters and a NUL. */
errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
/* Appends the string; the result and its NUL must fit in destMax. */
errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc);
/* Appends at most count characters and a NUL. */
errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
/* Formats into strDest; the characters written (without the NUL), or -1 when the output does
 * not fit (strDest then an empty string) or an argument is bad. */
int sprintf_s(char *strDest, size_t destMax, const char *format, ...);
int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList);
/* As sprintf_s, writing at most count characters: output cut at count is -1 with the cut
 * string kept; output that does not fit in destMax is -1 with an empty string. */
int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...);
int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_SECUREC_H */
