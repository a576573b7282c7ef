-- Matrix products in a shrinking sequential loop (paper 003 Listing 1.6): the loop-based case.
--
-- Every iteration multiplies the leading k x k corner of the input by itself and halves
-- k, so each parallel construct sees a different E_par in every iteration.
-- ==
-- entry: main
-- compiled random input { [64][64]f32 } auto output
-- compiled random input { [256][256]f32 } auto output
-- ==
-- entry: main
-- tags { notune }
-- compiled random input { [96][96]f32 } auto output
-- compiled random input { [192][192]f32 } auto output

def main [n] (a: [n][n]f32) : f32 =
  let (acc, _) =
    loop (acc, k) = (0f32, n) while k > 1 do
      let s = a[:k, :k]
      let p = map (\row -> map (\col -> f32.sum (map2 (*) row col)) s) s
      let r = map (\row -> f32.sum (map f32.abs row)) p
      in (acc + f32.sum r / f32.i64 (k * k), k / 2)
  in acc
