// The standard normal distribution's upper tail, for the p-value of a large-sample rank test.

/**
 * P(Z > z) for a standard normal Z, through the complementary error function (W. J. Cody's rational
 * approximations as published in Numerical Recipes' `erfcc`, relative error below 1.2e-7 everywhere),
 * which keeps precision far into the tail where `1 - cdf` would round to 0.
 */
export function normalUpperTail(z: number): number {
  if (Number.isNaN(z)) return NaN;
  return erfc(z / Math.SQRT2) / 2;
}

function erfc(x: number): number {
  const t = 1 / (1 + 0.5 * Math.abs(x));
  const poly =
    -x * x -
    1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t *
                      (0.27886807 +
                        t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const tail = t * Math.exp(poly);
  return x >= 0 ? tail : 2 - tail;
}
