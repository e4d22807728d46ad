/* A gate that a host function waits on, so that a stream holds still (its later tasks queued,
 * not run) until the program opens it: stream order made observable without sleeps. */
#ifndef EMU_GATE_H
#define EMU_GATE_H

#include <pthread.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int open;
} emu_gate;

static inline void emu_gate_init(emu_gate *g) {
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
}

/* A host function (aclrtHostFunc): returns once the gate `arg` is open. */
static inline void emu_gate_wait(void *arg) {
    emu_gate *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->open) {
        pthread_cond_wait(&g->cv, &g->lock);
    }
    pthread_mutex_unlock(&g->lock);
}

static inline void emu_gate_open(emu_gate *g) {
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
}

/* A host function (aclrtHostFunc) that opens the gate `arg`: the program, waiting on the gate
 * with emu_gate_wait, learns that the stream got this far. */
static inline void emu_gate_open_task(void *arg) { emu_gate_open(arg); }

/* Call once the stream that waited on the gate has been synchronised. */
static inline void emu_gate_destroy(emu_gate *g) {
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->lock);
}

#endif
