/* Naive dense matrix multiply (i-k-j order), N x N doubles: a compute-bound
 * workload whose working set is three matrices, touched in every interval.
 * usage: matmul [N] */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 800;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = calloc((size_t)n * n, sizeof(double));
	if (!a || !b || !c)
		return 1;
	for (int i = 0; i < n * n; i++) {
		a[i] = (i % 7) * 0.5;
		b[i] = (i % 5) * 0.25;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double x = a[i * n + k];
			for (int j = 0; j < n; j++)
				c[i * n + j] += x * b[k * n + j];
		}
	double s = 0;
	for (int i = 0; i < n * n; i++)
		s += c[i];
	printf("matmul %d: %.1f\n", n, s);
	free(a);
	free(b);
	free(c);
	return 0;
}
