-- Blocked LU decomposition without pivoting, Rodinia style (paper 003 §4.3).
--
-- A sequential loop over the diagonal blocks: factorise the diagonal block, solve the
-- upper and lower perimeter panels, update the internal blocks.  The perimeter and
-- internal parallelism shrinks every step, so their thresholds are loop-based.  The
-- input is made diagonally dominant so no pivoting is needed.
-- ==
-- entry: main
-- compiled random input { [48][48]f32 } auto output
-- compiled random input { [128][128]f32 } auto output
-- compiled random input { [64][64]f32 } auto output
-- compiled random input { [96][96]f32 } auto output

def block : i64 = 16


-- Right-looking elimination of one b x b block: L below the diagonal (unit), U above.
def lud_diagonal [b] (a: [b][b]f32) : [b][b]f32 =
  loop a = copy a for k < b do
    let piv = copy a[k]
    in map2 (\i row ->
               if i <= k then row
               else let f = row[k] / piv[k]
                    in map2 (\j x -> if j < k then x else if j == k then f else x - f * piv[j]) (iota b) row)
            (iota b) a

-- U panel block: solve L x = a (L unit lower triangular), right-looking: a loop of
-- parallel updates, so a map over blocks gets a work-group-per-block version.
def upper_block [b] (l: [b][b]f32) (a: [b][b]f32) : [b][b]f32 =
  loop x = copy a for i < b do
    let xi = copy x[i]
    in map2 (\k row -> if k > i then map2 (\v w -> v - l[k, i] * w) row xi else row) (iota b) x

-- L panel block: solve x U = a, column by column.
def lower_block [b] (u: [b][b]f32) (a: [b][b]f32) : [b][b]f32 =
  loop x = copy a for j < b do
    map (\row -> let xj = row[j] / u[j, j]
                 in map2 (\k v -> if k == j then xj else if k > j then v - xj * u[j, k] else v) (iota b) row)
        x

-- Internal block update a - l u.
def internal_block [b] (l: [b][b]f32) (u: [b][b]f32) (a: [b][b]f32) : [b][b]f32 =
  map2 (\lrow arow -> map2 (\ucol v -> v - f32.sum (map2 (*) lrow ucol)) (transpose u) arow) l a

def lud [m][b] (blocks: *[m][m][b][b]f32) : *[m][m][b][b]f32 =
  loop blocks for s < m do
    let diag = lud_diagonal blocks[s, s]
    let top = map (upper_block diag) blocks[s, s + 1:]
    let left = map (lower_block diag) blocks[s + 1:, s]
    let inner = map2 (\l arow -> map2 (\u a -> internal_block l u a) top arow) left blocks[s + 1:, s + 1:]
    let blocks[s, s] = copy diag
    let blocks[s, s + 1:] = copy top
    let blocks[s + 1:, s] = copy left
    let blocks[s + 1:, s + 1:] = copy inner
    in blocks

def main [n] (a: [n][n]f32) : [n][n]f32 =
  let b = i64.min block n -- not a constant: the compiler cannot specialise the code to it
  let m = n / b
  let blocks = tabulate_2d m m (\I J -> tabulate_2d b b (\i j ->
                 let x = a[I * b + i, J * b + j]
                 in if I * b + i == J * b + j then x + f32.i64 n else x))
  let res = lud blocks
  in tabulate_2d n n (\i j -> res[i / b, j / b, i % b, j % b])
