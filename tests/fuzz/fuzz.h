/* fuzz: what every harness shares. Each is a libFuzzer target (make fuzz, with clang) and,
 * linked with replay.c instead of libFuzzer, a program that replays its corpus (make check). */
#ifndef ENTROPYD_FUZZ_H
#define ENTROPYD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken property is a crash, so that libFuzzer keeps the input that broke it. */
#define FUZZ_ASSERT(cond)                                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, \
				#cond);                                                     \
			abort();                                                            \
		}                                                                           \
	} while (0)

#endif
