#ifndef TERMINAL_H
#define TERMINAL_H

#include <signal.h>

/*
 * The local terminal of the CLI's interactive commands (gosbx exec -it,
 * gosbx attach to a job on a terminal): standard input in raw mode and
 * the window size, as ssh and docker do it.
 */

/*
 * Put standard input's terminal in raw mode (cfmakeraw: every key goes
 * to the program in the sandbox, Ctrl-C included, and its terminal does
 * the output processing). terminal_restore() undoes it; it is also
 * registered with atexit() for die() and exit(). Returns 0, or -1 with
 * error() (not a terminal, or its settings cannot be changed).
 */
int terminal_make_raw(void);

/* Undo terminal_make_raw(); nothing when the terminal is not raw. */
void terminal_restore(void);

/*
 * The window size of standard input's (else standard output's)
 * terminal in characters: 0, or -1 when neither is a terminal or the
 * size is unknown (0 x 0).
 */
int terminal_size(unsigned *cols, unsigned *rows);

/*
 * Set *flag to 1 on each SIGWINCH (the window changed size) from now
 * on; flag must outlive the process's use of it.
 */
void terminal_watch_resize(volatile sig_atomic_t *flag);

#endif /* TERMINAL_H */
