-- Batched matrix multiplication (paper 003 Fig. 1.6): nested maps around a reduction,
-- which incremental flattening compiles into several code versions behind simple thresholds.
-- ==
-- entry: main
-- compiled random input { [1][128][128]f32 [1][128][128]f32 } auto output
-- compiled random input { [64][16][16]f32 [64][16][16]f32 } auto output
-- compiled random input { [4096][2][2]f32 [4096][2][2]f32 } auto output
-- compiled random input { [8][64][64]f32 [8][64][64]f32 } auto output
-- compiled random input { [512][8][8]f32 [512][8][8]f32 } auto output

def dot [m] (row: [m]f32) (col: [m]f32) : f32 = f32.sum (map2 (*) row col)


def main [k][n][m][p] (as: [k][n][m]f32) (bs: [k][m][p]f32) : [k][n][p]f32 =
  map2 (\a b -> map (\row -> map (dot row) (transpose b)) a) as bs
