-- Matrix products in a shrinking sequential loop (paper 003 Listing 1.6): the loop-based case.
--
-- Every iteration multiplies the leading k x k corner of the input by itself and halves
-- k, so each parallel construct sees a different E_par in every iteration (loop-based).
-- ==
-- entry: main
-- compiled random input { [96][96]f32 } auto output
-- compiled random input { [256][256]f32 } auto output
-- compiled random input { [128][128]f32 } auto output
-- compiled random input { [192][192]f32 } auto output

def dot [k] (row: [k]f32) (col: [k]f32) : f32 = f32.sum (map2 (*) row col)


-- The per-iteration results go into a vector (a segmented reduction) rather than one
-- scalar: Futhark's non-segmented reduction (`f32.sum` of a whole array) gave wrong,
-- run-dependent results on pocl in this loop (docs/futhark.md).
def main [n] (a: [n][n]f32) : [n]f32 =
  let (acc, _) =
    loop (acc: [n]f32, k) = (replicate n 0f32, n) while k > 1 do
      let s = a[:k, :k]
      let p = map (\row -> map (dot row) (transpose s)) s
      let r = map (\row -> f32.sum (map f32.abs row)) p
      let acc = tabulate n (\i -> if i < k then acc[i] + r[i] / f32.i64 (k * k) else acc[i])
      in (acc, k / 2)
  in acc
