-- A plain matrix product for the tests of problem.sizes (tests/test_futhark_sizes.py): the
-- compiler block-tiles it (tile sizes Ty/Tk, register tile Ry) and keeps a segmented
-- reduction version (thread-block size, number of blocks) behind one threshold. Few
-- kernels, so pocl builds a new size setting in seconds.
-- ==
-- entry: main
-- compiled random input { [128][128]f32 [128][128]f32 } auto output
-- compiled random input { [16][256]f32 [256][16]f32 } auto output
-- compiled random input { [64][64]f32 [64][64]f32 } auto output

def main [n][m][p] (a: [n][m]f32) (b: [m][p]f32) : [n][p]f32 =
  map (\r -> map (\c -> f32.sum (map2 (*) r c)) (transpose b)) a
