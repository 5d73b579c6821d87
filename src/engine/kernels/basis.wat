;; The Grid's once-per-Grid passes (src/engine/kernels/basis.ts): standardising X, the
;; all-attribute model's rows, moments, informativeness and relevance, the merge of the chunks'
;; rows, the composite's fit, the solo votes and their moments, and the insights' pass over the
;; cells. f64 arithmetic (f64x2 in informativeness, one row a lane), each operation the very one
;; of the plain loop that is its twin in basis.ts (`jsBasis`), in the same order: the same bits. A Grid's first and only
;; run (the CLI's) executes these once, where JavaScript still runs in its interpreter and
;; WebAssembly is compiled code from the first call.
;;
;; Every pointer is a byte offset into the imported memory; f64 arrays are 8-byte aligned. The
;; address of x_i at column columns[a] is written out where it is read, X + 8 (i stride +
;; columns[a]) (V8 does not inline a call, and a call a value took most of the moments' time).
(module
  (import "env" "memory" (memory 1))

  ;; 1 when one of the n doubles at p is NaN.
  (func (export "hasNaN") (param $p i32) (param $n i32) (result i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $n) (i32.const 3))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (if (f64.ne (f64.load (local.get $p)) (f64.load (local.get $p))) (then (return (i32.const 1))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $rows)))
    (i32.const 0))

  ;; The index of the first of the n doubles at p that is infinite, or -1.
  (func (export "firstInfinite") (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $v f64)
    (block $done
      (loop $values
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $v (f64.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 3)))))
        (if (i32.or (f64.eq (local.get $v) (f64.const inf)) (f64.eq (local.get $v) (f64.const -inf))) (then (return (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $values)))
    (i32.const -1))

  ;; Row a of a Gram matrix from its diagonal on: out[b] = sum over m < n of x_a[m] x_b[m] for
  ;; b = a .. k - 1, each sum over m in order from 0, columns c at cols + 8 c n. Four entries a
  ;; pass while four are left, each in a lane of its own (two f64x2 sums: two chains of additions
  ;; where one sum a pass waited on each addition before the next), then one a pass.
  (func $gramRow (param $cols i32) (param $n i32) (param $k i32) (param $a i32) (param $out i32)
    (local $b i32) (local $xa i32) (local $xb i32) (local $m i32) (local $sum f64)
    (local $bytes i32) (local $at i32) (local $x v128) (local $lo v128) (local $hi v128)
    (local.set $xa (i32.add (local.get $cols) (i32.shl (i32.mul (local.get $a) (local.get $n)) (i32.const 3))))
    (local.set $bytes (i32.shl (local.get $n) (i32.const 3)))
    (local.set $b (local.get $a))
    (block $doneFour
      (loop $fours
        (br_if $doneFour (i32.gt_s (i32.add (local.get $b) (i32.const 4)) (local.get $k)))
        (local.set $xb (i32.add (local.get $cols) (i32.mul (local.get $b) (local.get $bytes))))
        (local.set $lo (v128.const f64x2 0 0))
        (local.set $hi (v128.const f64x2 0 0))
        (local.set $m (i32.const 0))
        (block $doneRows
          (loop $rows4
            (br_if $doneRows (i32.ge_s (local.get $m) (local.get $bytes)))
            (local.set $x (v128.load64_splat (i32.add (local.get $xa) (local.get $m))))
            (local.set $at (i32.add (local.get $xb) (local.get $m)))
            (local.set $lo (f64x2.add (local.get $lo) (f64x2.mul (local.get $x)
              (v128.load64_lane 1 (i32.add (local.get $at) (local.get $bytes)) (v128.load64_zero (local.get $at))))))
            (local.set $at (i32.add (local.get $at) (i32.shl (local.get $bytes) (i32.const 1))))
            (local.set $hi (f64x2.add (local.get $hi) (f64x2.mul (local.get $x)
              (v128.load64_lane 1 (i32.add (local.get $at) (local.get $bytes)) (v128.load64_zero (local.get $at))))))
            (local.set $m (i32.add (local.get $m) (i32.const 8)))
            (br $rows4)))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $b) (i32.const 3))) (local.get $lo))
        (v128.store offset=16 (i32.add (local.get $out) (i32.shl (local.get $b) (i32.const 3))) (local.get $hi))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (br $fours)))
    (block $doneB
      (loop $entries
        (br_if $doneB (i32.ge_s (local.get $b) (local.get $k)))
        (local.set $xb (i32.add (local.get $cols) (i32.shl (i32.mul (local.get $b) (local.get $n)) (i32.const 3))))
        (local.set $sum (f64.const 0))
        (local.set $m (i32.const 0))
        (block $doneM
          (loop $rows
            (br_if $doneM (i32.ge_s (local.get $m) (local.get $n)))
            (local.set $sum
              (f64.add (local.get $sum)
                (f64.mul
                  (f64.load (i32.add (local.get $xa) (i32.shl (local.get $m) (i32.const 3))))
                  (f64.load (i32.add (local.get $xb) (i32.shl (local.get $m) (i32.const 3)))))))
            (local.set $m (i32.add (local.get $m) (i32.const 1)))
            (br $rows)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $b) (i32.const 3))) (local.get $sum))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $entries))))

  ;; The Gram matrix of the k columns at cols (n each) divided by `divisor`, both triangles, into
  ;; out (k x k): row a from gramRow, then each entry from the diagonal on divided and mirrored.
  (func $covariance (param $cols i32) (param $n i32) (param $k i32) (param $divisor f64) (param $out i32)
    (local $a i32) (local $b i32) (local $v f64)
    (block $doneA
      (loop $rowsA
        (br_if $doneA (i32.ge_s (local.get $a) (local.get $k)))
        (call $gramRow (local.get $cols) (local.get $n) (local.get $k) (local.get $a)
          (i32.add (local.get $out) (i32.shl (i32.mul (local.get $a) (local.get $k)) (i32.const 3))))
        (local.set $b (local.get $a))
        (block $doneB
          (loop $rowsB
            (br_if $doneB (i32.ge_s (local.get $b) (local.get $k)))
            (local.set $v
              (f64.div
                (f64.load (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $a) (local.get $k)) (local.get $b)) (i32.const 3))))
                (local.get $divisor)))
            (f64.store (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $a) (local.get $k)) (local.get $b)) (i32.const 3))) (local.get $v))
            (f64.store (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $b) (local.get $k)) (local.get $a)) (i32.const 3))) (local.get $v))
            (local.set $b (i32.add (local.get $b) (i32.const 1)))
            (br $rowsB)))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $rowsA))))

  ;; walk.ts standardize: X (n x k, row-major) into mean, scale, z (column-major) and corr; sum,
  ;; ss (k doubles) and constant (k bytes) are scratch.
  (func (export "standardize")
    (param $X i32) (param $n i32) (param $k i32) (param $mean i32) (param $scale i32) (param $z i32) (param $corr i32)
    (param $sum i32) (param $ss i32) (param $constant i32)
    (local $i i32) (local $j i32) (local $at i32) (local $v f64) (local $d f64) (local $nf f64) (local $n1 f64)
    (local.set $nf (f64.convert_i32_s (local.get $n)))
    (local.set $n1 (f64.convert_i32_s (i32.sub (local.get $n) (i32.const 1))))
    (memory.fill (local.get $sum) (i32.const 0) (i32.shl (local.get $k) (i32.const 3)))
    (memory.fill (local.get $ss) (i32.const 0) (i32.shl (local.get $k) (i32.const 3)))
    (memory.fill (local.get $constant) (i32.const 1) (local.get $k))
    ;; Row by row, each column's sum in row order.
    (local.set $at (local.get $X))
    (local.set $i (i32.const 0))
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $cdone1
          (loop $cols1
            (br_if $cdone1 (i32.ge_s (local.get $j) (local.get $k)))
            (f64.store (i32.add (local.get $sum) (i32.shl (local.get $j) (i32.const 3)))
              (f64.add (f64.load (i32.add (local.get $sum) (i32.shl (local.get $j) (i32.const 3)))) (f64.load (local.get $at))))
            (local.set $at (i32.add (local.get $at) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cols1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows1)))
    (local.set $j (i32.const 0))
    (block $mdone
      (loop $means
        (br_if $mdone (i32.ge_s (local.get $j) (local.get $k)))
        (f64.store (i32.add (local.get $mean) (i32.shl (local.get $j) (i32.const 3)))
          (f64.div (f64.load (i32.add (local.get $sum) (i32.shl (local.get $j) (i32.const 3)))) (local.get $nf)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $means)))
    ;; Squares about the mean, and whether each column is constant (a NaN makes it not).
    (local.set $at (local.get $X))
    (local.set $i (i32.const 0))
    (block $done2
      (loop $rows2
        (br_if $done2 (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $cdone2
          (loop $cols2
            (br_if $cdone2 (i32.ge_s (local.get $j) (local.get $k)))
            (local.set $v (f64.load (local.get $at)))
            (local.set $d (f64.sub (local.get $v) (f64.load (i32.add (local.get $mean) (i32.shl (local.get $j) (i32.const 3))))))
            (f64.store (i32.add (local.get $ss) (i32.shl (local.get $j) (i32.const 3)))
              (f64.add (f64.load (i32.add (local.get $ss) (i32.shl (local.get $j) (i32.const 3)))) (f64.mul (local.get $d) (local.get $d))))
            (if (f64.ne (local.get $v) (f64.load (i32.add (local.get $X) (i32.shl (local.get $j) (i32.const 3)))))
              (then (i32.store8 (i32.add (local.get $constant) (local.get $j)) (i32.const 0))))
            (local.set $at (i32.add (local.get $at) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cols2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows2)))
    (local.set $j (i32.const 0))
    (block $sdone
      (loop $scales
        (br_if $sdone (i32.ge_s (local.get $j) (local.get $k)))
        (f64.store (i32.add (local.get $scale) (i32.shl (local.get $j) (i32.const 3)))
          (if (result f64) (i32.load8_u (i32.add (local.get $constant) (local.get $j)))
            (then (f64.const 0))
            (else (f64.sqrt (f64.div (f64.load (i32.add (local.get $ss) (i32.shl (local.get $j) (i32.const 3)))) (local.get $n1))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $scales)))
    ;; z[j n + i] = (x_ij - mean_j) / scale_j, 0 for a constant column.
    (local.set $at (local.get $X))
    (local.set $i (i32.const 0))
    (block $done3
      (loop $rows3
        (br_if $done3 (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $cdone3
          (loop $cols3
            (br_if $cdone3 (i32.ge_s (local.get $j) (local.get $k)))
            (f64.store (i32.add (local.get $z) (i32.shl (i32.add (i32.mul (local.get $j) (local.get $n)) (local.get $i)) (i32.const 3)))
              (if (result f64) (i32.load8_u (i32.add (local.get $constant) (local.get $j)))
                (then (f64.const 0))
                (else
                  (f64.div
                    (f64.sub (f64.load (local.get $at)) (f64.load (i32.add (local.get $mean) (i32.shl (local.get $j) (i32.const 3)))))
                    (f64.load (i32.add (local.get $scale) (i32.shl (local.get $j) (i32.const 3))))))))
            (local.set $at (i32.add (local.get $at) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cols3)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows3)))
    (call $covariance (local.get $z) (local.get $n) (local.get $k) (local.get $n1) (local.get $corr)))

  ;; model.ts usableRows: usable[i] = 1 when row i has every one of the k columns present; the count.
  (func (export "usableRows") (param $X i32) (param $n i32) (param $stride i32) (param $columns i32) (param $k i32) (param $usable i32) (result i32)
    (local $i i32) (local $a i32) (local $ok i32) (local $count i32) (local $row i32) (local $v f64)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $ok (i32.const 1))
        (local.set $a (i32.const 0))
        (block $cdone
          (loop $cols
            (br_if $cdone (i32.ge_s (local.get $a) (local.get $k)))
            (local.set $v (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3)))))
            (if (f64.ne (local.get $v) (local.get $v))
              (then (local.set $ok (i32.const 0)) (br $cdone)))
            (local.set $a (i32.add (local.get $a) (i32.const 1)))
            (br $cols)))
        (i32.store8 (i32.add (local.get $usable) (local.get $i)) (local.get $ok))
        (local.set $count (i32.add (local.get $count) (local.get $ok)))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))
    (local.get $count))

  ;; moments.ts, complete rows: the means of the usable rows (the count returned: below 2 the
  ;; caller throws and nothing else is meaningful), the centred values column by column into
  ;; centred (k x count), the covariance (N - 1 denominator) into cov, and a constant column's
  ;; variances and covariances exactly 0.
  (func (export "completeMoments")
    (param $X i32) (param $n i32) (param $stride i32) (param $columns i32) (param $k i32) (param $usable i32)
    (param $mean i32) (param $centred i32) (param $cov i32) (result i32)
    (local $i i32) (local $a i32) (local $b i32) (local $m i32) (local $count i32) (local $row i32) (local $at i32)
    (local $v f64) (local $first f64) (local $constant i32)
    (memory.fill (local.get $mean) (i32.const 0) (i32.shl (local.get $k) (i32.const 3)))
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.ge_s (local.get $i) (local.get $n)))
        (if (i32.load8_u (i32.add (local.get $usable) (local.get $i)))
          (then
            (local.set $count (i32.add (local.get $count) (i32.const 1)))
            (local.set $a (i32.const 0))
            (block $cdone1
              (loop $cols1
                (br_if $cdone1 (i32.ge_s (local.get $a) (local.get $k)))
                (local.set $at (i32.add (local.get $mean) (i32.shl (local.get $a) (i32.const 3))))
                (f64.store (local.get $at)
                  (f64.add (f64.load (local.get $at)) (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3))))))
                (local.set $a (i32.add (local.get $a) (i32.const 1)))
                (br $cols1)))))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows1)))
    (if (i32.lt_s (local.get $count) (i32.const 2)) (then (return (local.get $count))))
    (local.set $a (i32.const 0))
    (block $mdone
      (loop $means
        (br_if $mdone (i32.ge_s (local.get $a) (local.get $k)))
        (local.set $at (i32.add (local.get $mean) (i32.shl (local.get $a) (i32.const 3))))
        (f64.store (local.get $at) (f64.div (f64.load (local.get $at)) (f64.convert_i32_s (local.get $count))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $means)))
    ;; centred[a count + m] = x - mean_a over the usable rows m = 0, 1, ...
    (local.set $i (i32.const 0))
    (local.set $row (i32.const 0))
    (block $done2
      (loop $rows2
        (br_if $done2 (i32.ge_s (local.get $i) (local.get $n)))
        (if (i32.load8_u (i32.add (local.get $usable) (local.get $i)))
          (then
            (local.set $a (i32.const 0))
            (block $cdone2
              (loop $cols2
                (br_if $cdone2 (i32.ge_s (local.get $a) (local.get $k)))
                (f64.store
                  (i32.add (local.get $centred) (i32.shl (i32.add (i32.mul (local.get $a) (local.get $count)) (local.get $m)) (i32.const 3)))
                  (f64.sub
                    (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3))))
                    (f64.load (i32.add (local.get $mean) (i32.shl (local.get $a) (i32.const 3))))))
                (local.set $a (i32.add (local.get $a) (i32.const 1)))
                (br $cols2)))
            (local.set $m (i32.add (local.get $m) (i32.const 1)))))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows2)))
    (call $covariance (local.get $centred) (local.get $count) (local.get $k)
      (f64.convert_i32_s (i32.sub (local.get $count) (i32.const 1))) (local.get $cov))
    ;; A constant column (over the usable rows, NaN skipped) gets variance and covariances 0.
    (local.set $a (i32.const 0))
    (block $zdone
      (loop $columnsZ
        (br_if $zdone (i32.ge_s (local.get $a) (local.get $k)))
        (local.set $first (f64.const nan))
        (local.set $constant (i32.const 1))
        (local.set $i (i32.const 0))
        (local.set $row (i32.const 0))
        (block $rdone
          (loop $rowsZ
            (br_if $rdone (i32.or (i32.ge_s (local.get $i) (local.get $n)) (i32.eqz (local.get $constant))))
            (if (i32.load8_u (i32.add (local.get $usable) (local.get $i)))
              (then
                (local.set $v (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3)))))
                (if (f64.eq (local.get $v) (local.get $v))
                  (then
                    (if (f64.ne (local.get $first) (local.get $first))
                      (then (local.set $first (local.get $v)))
                      (else (if (f64.ne (local.get $v) (local.get $first)) (then (local.set $constant (i32.const 0))))))))))
            (local.set $row (i32.add (local.get $row) (local.get $stride)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $rowsZ)))
        (if (local.get $constant)
          (then
            (local.set $b (i32.const 0))
            (block $bdone
              (loop $zero
                (br_if $bdone (i32.ge_s (local.get $b) (local.get $k)))
                (f64.store (i32.add (local.get $cov) (i32.shl (i32.add (i32.mul (local.get $b) (local.get $k)) (local.get $a)) (i32.const 3))) (f64.const 0))
                (f64.store (i32.add (local.get $cov) (i32.shl (i32.add (i32.mul (local.get $a) (local.get $k)) (local.get $b)) (i32.const 3))) (f64.const 0))
                (local.set $b (i32.add (local.get $b) (i32.const 1)))
                (br $zero)))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $columnsZ)))
    (local.get $count))

;; model.ts modelBasis: infoX[i] = c' S c, c = x_i - mean over the k columns (quadraticForm:
  ;; sum over a of c_a (sum over b of S_ab c_b), each sum in order), NaN on rows not usable. Two
  ;; usable rows a pass, one in each lane of f64x2 (each lane the very operations of one row):
  ;; their centred values go into centred pair by pair, lane by lane (16 k bytes a pair), and
  ;; their row indices into rows.
  (func (export "informativeness")
    (param $X i32) (param $n i32) (param $stride i32) (param $columns i32) (param $k i32) (param $usable i32)
    (param $mean i32) (param $inverse i32) (param $centred i32) (param $rows i32) (param $infoX i32)
    (local $i i32) (local $a i32) (local $b i32) (local $m i32) (local $row i32) (local $srow i32) (local $base i32)
    (local $pair i32) (local $pairs i32) (local $k16 i32)
    (local $q v128) (local $inner v128)
    (local.set $k16 (i32.shl (local.get $k) (i32.const 4)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (if (i32.load8_u (i32.add (local.get $usable) (local.get $i)))
          (then
            (local.set $base
              (i32.add (local.get $centred)
                (i32.add (i32.mul (i32.shr_u (local.get $m) (i32.const 1)) (local.get $k16)) (i32.shl (i32.and (local.get $m) (i32.const 1)) (i32.const 3)))))
            (local.set $a (i32.const 0))
            (block $cdone
              (loop $centre
                (br_if $cdone (i32.ge_s (local.get $a) (local.get $k)))
                (f64.store (i32.add (local.get $base) (i32.shl (local.get $a) (i32.const 4)))
                  (f64.sub
                    (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3))))
                    (f64.load (i32.add (local.get $mean) (i32.shl (local.get $a) (i32.const 3))))))
                (local.set $a (i32.add (local.get $a) (i32.const 1)))
                (br $centre)))
            (i32.store (i32.add (local.get $rows) (i32.shl (local.get $m) (i32.const 2))) (local.get $i))
            (local.set $m (i32.add (local.get $m) (i32.const 1))))
          (else (f64.store (i32.add (local.get $infoX) (i32.shl (local.get $i) (i32.const 3))) (f64.const nan))))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    ;; An odd last row's pair: 0 in its second lane (computed, never stored).
    (if (i32.and (local.get $m) (i32.const 1))
      (then
        (local.set $base (i32.add (i32.add (local.get $centred) (i32.mul (i32.shr_u (local.get $m) (i32.const 1)) (local.get $k16))) (i32.const 8)))
        (local.set $a (i32.const 0))
        (block $zdone
          (loop $zero
            (br_if $zdone (i32.ge_s (local.get $a) (local.get $k)))
            (f64.store (i32.add (local.get $base) (i32.shl (local.get $a) (i32.const 4))) (f64.const 0))
            (local.set $a (i32.add (local.get $a) (i32.const 1)))
            (br $zero)))))
    (local.set $pairs (i32.shr_u (i32.add (local.get $m) (i32.const 1)) (i32.const 1)))
    (local.set $base (local.get $centred))
    (block $pdone
      (loop $pairsLoop
        (br_if $pdone (i32.ge_s (local.get $pair) (local.get $pairs)))
        (local.set $q (f64x2.splat (f64.const 0)))
        (local.set $srow (local.get $inverse))
        (local.set $a (i32.const 0))
        (block $adone
          (loop $outer
            (br_if $adone (i32.ge_s (local.get $a) (local.get $k)))
            (local.set $inner (f64x2.splat (f64.const 0)))
            (local.set $b (i32.const 0))
            (block $bdone
              (loop $innerLoop
                (br_if $bdone (i32.ge_s (local.get $b) (local.get $k)))
                (local.set $inner
                  (f64x2.add (local.get $inner)
                    (f64x2.mul
                      (f64x2.splat (f64.load (i32.add (local.get $srow) (i32.shl (local.get $b) (i32.const 3)))))
                      (v128.load (i32.add (local.get $base) (i32.shl (local.get $b) (i32.const 4)))))))
                (local.set $b (i32.add (local.get $b) (i32.const 1)))
                (br $innerLoop)))
            (local.set $q
              (f64x2.add (local.get $q)
                (f64x2.mul (v128.load (i32.add (local.get $base) (i32.shl (local.get $a) (i32.const 4)))) (local.get $inner))))
            (local.set $srow (i32.add (local.get $srow) (i32.shl (local.get $k) (i32.const 3))))
            (local.set $a (i32.add (local.get $a) (i32.const 1)))
            (br $outer)))
        (f64.store
          (i32.add (local.get $infoX) (i32.shl (i32.load (i32.add (local.get $rows) (i32.shl (local.get $pair) (i32.const 3)))) (i32.const 3)))
          (f64x2.extract_lane 0 (local.get $q)))
        (if (i32.lt_s (i32.add (i32.shl (local.get $pair) (i32.const 1)) (i32.const 1)) (local.get $m))
          (then
            (f64.store
              (i32.add (local.get $infoX)
                (i32.shl (i32.load (i32.add (local.get $rows) (i32.add (i32.shl (local.get $pair) (i32.const 3)) (i32.const 4)))) (i32.const 3)))
              (f64x2.extract_lane 1 (local.get $q)))))
        (local.set $base (i32.add (local.get $base) (local.get $k16)))
        (local.set $pair (i32.add (local.get $pair) (i32.const 1)))
        (br $pairsLoop)))
    )

  ;; model.ts modelAt: relevance[i] = sum over a of (x_ia - mean_a) direction_a in order (NaN on
  ;; rows not usable), similarity[i] = relevance[i] - 0.5 (infoX[i] + infoTheta).
  (func (export "relevance")
    (param $X i32) (param $n i32) (param $stride i32) (param $columns i32) (param $k i32) (param $usable i32)
    (param $mean i32) (param $direction i32) (param $infoX i32) (param $infoTheta f64) (param $relevance i32) (param $similarity i32)
    (local $i i32) (local $a i32) (local $row i32) (local $s f64) (local $at i32)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $s (f64.const nan))
        (if (i32.load8_u (i32.add (local.get $usable) (local.get $i)))
          (then
            (local.set $s (f64.const 0))
            (local.set $a (i32.const 0))
            (block $cdone
              (loop $cols
                (br_if $cdone (i32.ge_s (local.get $a) (local.get $k)))
                (local.set $s
                  (f64.add (local.get $s)
                    (f64.mul
                      (f64.sub
                        (f64.load (i32.add (local.get $X) (i32.shl (i32.add (local.get $row) (i32.load (i32.add (local.get $columns) (i32.shl (local.get $a) (i32.const 2))))) (i32.const 3))))
                        (f64.load (i32.add (local.get $mean) (i32.shl (local.get $a) (i32.const 3)))))
                      (f64.load (i32.add (local.get $direction) (i32.shl (local.get $a) (i32.const 3)))))))
                (local.set $a (i32.add (local.get $a) (i32.const 1)))
                (br $cols)))))
        (local.set $at (i32.shl (local.get $i) (i32.const 3)))
        (f64.store (i32.add (local.get $relevance) (local.get $at)) (local.get $s))
        (f64.store (i32.add (local.get $similarity) (local.get $at))
          (f64.sub (local.get $s)
            (f64.mul (f64.const 0.5) (f64.add (f64.load (i32.add (local.get $infoX) (local.get $at))) (local.get $infoTheta)))))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))
    )

  ;; insights.ts gridInsights' pass over the cells: total (returned) = the weights' sum in cell
  ;; order; then per valid cell c of combination q and attribute j, slot j (q holds j) or k + j
  ;; (it does not) of each sum in out (5 arrays of 2k: fitSum, count, positiveWeight,
  ;; weightedYhat, share) gains the cell's terms, in cell order. has (q k + j) and sizes (q) are
  ;; the combinations'. terms: a scratch of 64 cells' terms (2,560 bytes).
  ;;
  ;; A run of cells of one combination adds to the same slot of each sum for a given j: first
  ;; each cell's five terms (64 cells at most at a time: a scratch that does not grow the memory) (0 for what it does not add: an invalid cell adds nothing, a weight
  ;; not above 0 only its fit and count), then per j the slot's five sums held in locals while
  ;; the run's terms are added, cell by cell. Adding 0 leaves a sum as it was (a sum starts at
  ;; +0 and so is never -0: x + 0 is x, NaN and the infinities included), so every sum takes the
  ;; same values in the same order as one pass over the cells per attribute: the same bits.
  ;; About half the instructions of a read-add-write per cell and attribute (each cell's slot
  ;; and its five sums reached through memory), and no store a later load waits for.
  (func (export "insights")
    (param $combination i32) (param $weights i32) (param $yhats i32) (param $valid i32) (param $C i32)
    (param $has i32) (param $sizes i32) (param $k i32) (param $ybar f64) (param $out i32) (param $terms i32) (result f64)
    (local $c i32) (local $j i32) (local $q i32) (local $row i32) (local $slot i32) (local $k2 i32)
    (local $total f64) (local $weight f64) (local $yhat f64) (local $at i32) (local $end i32) (local $from i32) (local $to i32)
    (local $fit i32) (local $cnt i32) (local $pos i32) (local $wy i32) (local $share i32)
    (local $a1 f64) (local $a2 f64) (local $a3 f64) (local $a4 f64) (local $a5 f64)
    (local.set $k2 (i32.shl (local.get $k) (i32.const 4)))
    (local.set $fit (local.get $out))
    (local.set $cnt (i32.add (local.get $fit) (local.get $k2)))
    (local.set $pos (i32.add (local.get $cnt) (local.get $k2)))
    (local.set $wy (i32.add (local.get $pos) (local.get $k2)))
    (local.set $share (i32.add (local.get $wy) (local.get $k2)))
    (memory.fill (local.get $out) (i32.const 0) (i32.mul (local.get $k2) (i32.const 5)))
    (block $tdone
      (loop $totals
        (br_if $tdone (i32.ge_s (local.get $c) (local.get $C)))
        (local.set $total (f64.add (local.get $total) (f64.load (i32.add (local.get $weights) (i32.shl (local.get $c) (i32.const 3))))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $totals)))
    ;; Run by run (cells from..to of combination q), a block of up to 64 of its cells at a time
    ;; (cells from..until): each cell's terms (fit, count, positive weight, weighted yhat, share;
    ;; 40 bytes a cell), then each attribute's slot gains them.
    (local.set $from (i32.const 0))
    (block $done
      (loop $runs
        (br_if $done (i32.ge_s (local.get $from) (local.get $C)))
        (local.set $q (i32.load (i32.add (local.get $combination) (i32.shl (local.get $from) (i32.const 2)))))
        (local.set $to (i32.add (local.get $from) (i32.const 1)))
        (block $rdone
          (loop $run
            (br_if $rdone (i32.ge_s (local.get $to) (local.get $C)))
            (br_if $rdone (i32.ge_s (i32.sub (local.get $to) (local.get $from)) (i32.const 64)))
            (br_if $rdone (i32.ne (i32.load (i32.add (local.get $combination) (i32.shl (local.get $to) (i32.const 2)))) (local.get $q)))
            (local.set $to (i32.add (local.get $to) (i32.const 1)))
            (br $run)))
        (local.set $at (local.get $terms))
        (local.set $c (local.get $from))
        (loop $each
          (v128.store offset=0 (local.get $at) (v128.const i64x2 0 0))
          (v128.store offset=16 (local.get $at) (v128.const i64x2 0 0))
          (f64.store offset=32 (local.get $at) (f64.const 0))
          (if (i32.load8_u (i32.add (local.get $valid) (local.get $c)))
            (then
              (local.set $weight (f64.load (i32.add (local.get $weights) (i32.shl (local.get $c) (i32.const 3)))))
              (f64.store offset=0 (local.get $at) (local.get $weight))
              (f64.store offset=8 (local.get $at) (f64.const 1))
              (if (f64.gt (local.get $weight) (f64.const 0))
                (then
                  (local.set $yhat (f64.load (i32.add (local.get $yhats) (i32.shl (local.get $c) (i32.const 3)))))
                  (f64.store offset=16 (local.get $at) (local.get $weight))
                  (f64.store offset=24 (local.get $at) (f64.mul (local.get $weight) (local.get $yhat)))
                  (f64.store offset=32 (local.get $at)
                    (f64.div
                      (f64.mul (f64.div (local.get $weight) (local.get $total)) (f64.sub (local.get $yhat) (local.get $ybar)))
                      (f64.convert_i32_s (i32.load (i32.add (local.get $sizes) (i32.shl (local.get $q) (i32.const 2)))))))))))
          (local.set $at (i32.add (local.get $at) (i32.const 40)))
          (local.set $c (i32.add (local.get $c) (i32.const 1)))
          (br_if $each (i32.lt_s (local.get $c) (local.get $to))))
        (local.set $end (local.get $at))
        (local.set $row (i32.add (local.get $has) (i32.mul (local.get $q) (local.get $k))))
        (local.set $j (i32.const 0))
        (block $jdone
          (loop $attributes
            (br_if $jdone (i32.ge_s (local.get $j) (local.get $k)))
            (local.set $slot (i32.shl
              (i32.add (i32.mul (i32.sub (i32.const 1) (i32.load8_u (i32.add (local.get $row) (local.get $j)))) (local.get $k)) (local.get $j))
              (i32.const 3)))
            (local.set $a1 (f64.load (i32.add (local.get $fit) (local.get $slot))))
            (local.set $a2 (f64.load (i32.add (local.get $cnt) (local.get $slot))))
            (local.set $a3 (f64.load (i32.add (local.get $pos) (local.get $slot))))
            (local.set $a4 (f64.load (i32.add (local.get $wy) (local.get $slot))))
            (local.set $a5 (f64.load (i32.add (local.get $share) (local.get $slot))))
            (local.set $at (local.get $terms))
            (loop $cells
              (local.set $a1 (f64.add (local.get $a1) (f64.load offset=0 (local.get $at))))
              (local.set $a2 (f64.add (local.get $a2) (f64.load offset=8 (local.get $at))))
              (local.set $a3 (f64.add (local.get $a3) (f64.load offset=16 (local.get $at))))
              (local.set $a4 (f64.add (local.get $a4) (f64.load offset=24 (local.get $at))))
              (local.set $a5 (f64.add (local.get $a5) (f64.load offset=32 (local.get $at))))
              (local.set $at (i32.add (local.get $at) (i32.const 40)))
              (br_if $cells (i32.lt_u (local.get $at) (local.get $end))))
            (f64.store (i32.add (local.get $fit) (local.get $slot)) (local.get $a1))
            (f64.store (i32.add (local.get $cnt) (local.get $slot)) (local.get $a2))
            (f64.store (i32.add (local.get $pos) (local.get $slot)) (local.get $a3))
            (f64.store (i32.add (local.get $wy) (local.get $slot)) (local.get $a4))
            (f64.store (i32.add (local.get $share) (local.get $slot)) (local.get $a5))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $attributes)))
        (local.set $from (local.get $to))
        (br $runs)))
    (local.get $total))
  ;; grid.ts GridMerge: composite[i] += parts[p n + i] and used[i] |= usedParts[p n + i] for
  ;; the P partials in order (each row's additions in the partials' order).
  (func (export "mergeRows") (param $parts i32) (param $usedParts i32) (param $P i32) (param $n i32) (param $composite i32) (param $used i32)
    (local $p i32) (local $i i32) (local $at i32) (local $src i32) (local $usrc i32)
    (local.set $src (local.get $parts))
    (local.set $usrc (local.get $usedParts))
    (block $pdone
      (loop $partials
        (br_if $pdone (i32.ge_s (local.get $p) (local.get $P)))
        (local.set $i (i32.const 0))
        (block $done
          (loop $rows
            (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
            (local.set $at (i32.add (local.get $composite) (i32.shl (local.get $i) (i32.const 3))))
            (f64.store (local.get $at) (f64.add (f64.load (local.get $at)) (f64.load (local.get $src))))
            (local.set $at (i32.add (local.get $used) (local.get $i)))
            (i32.store8 (local.get $at) (i32.or (i32.load8_u (local.get $at)) (i32.load8_u (local.get $usrc))))
            (local.set $src (i32.add (local.get $src) (i32.const 8)))
            (local.set $usrc (i32.add (local.get $usrc) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $rows)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $partials))))

  ;; grid.ts compositeFit: the squared correlation of weights and y over the used rows (0 when
  ;; either is constant), means then sums in row order.
  (func (export "compositeFit") (param $w i32) (param $y i32) (param $used i32) (param $n i32) (result f64)
    (local $i i32) (local $count f64) (local $mw f64) (local $my f64) (local $dw f64) (local $dy f64)
    (local $sxy f64) (local $sxx f64) (local $syy f64)
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.ge_s (local.get $i) (local.get $n)))
        (if (i32.load8_u (i32.add (local.get $used) (local.get $i)))
          (then
            (local.set $count (f64.add (local.get $count) (f64.const 1)))
            (local.set $mw (f64.add (local.get $mw) (f64.load (i32.add (local.get $w) (i32.shl (local.get $i) (i32.const 3))))))
            (local.set $my (f64.add (local.get $my) (f64.load (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 3))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows1)))
    (local.set $mw (f64.div (local.get $mw) (local.get $count)))
    (local.set $my (f64.div (local.get $my) (local.get $count)))
    (local.set $i (i32.const 0))
    (block $done2
      (loop $rows2
        (br_if $done2 (i32.ge_s (local.get $i) (local.get $n)))
        (if (i32.load8_u (i32.add (local.get $used) (local.get $i)))
          (then
            (local.set $dw (f64.sub (f64.load (i32.add (local.get $w) (i32.shl (local.get $i) (i32.const 3)))) (local.get $mw)))
            (local.set $dy (f64.sub (f64.load (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 3)))) (local.get $my)))
            (local.set $sxy (f64.add (local.get $sxy) (f64.mul (local.get $dw) (local.get $dy))))
            (local.set $sxx (f64.add (local.get $sxx) (f64.mul (local.get $dw) (local.get $dw))))
            (local.set $syy (f64.add (local.get $syy) (f64.mul (local.get $dy) (local.get $dy))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows2)))
    (if (result f64) (i32.and (f64.gt (local.get $sxx) (f64.const 0)) (f64.gt (local.get $syy) (f64.const 0)))
      (then (f64.div (f64.mul (local.get $sxy) (local.get $sxy)) (f64.mul (local.get $sxx) (local.get $syy))))
      (else (f64.const 0))))

  ;; grid.ts cellTotals: over the cells with a positive weight, the weights' sum, their squares'
  ;; and the weighted yhat (in cell order), and the count of cells not valid, into out (4 doubles).
  (func (export "cellTotals") (param $weights i32) (param $yhats i32) (param $valid i32) (param $C i32) (param $out i32)
    (local $c i32) (local $a f64) (local $total f64) (local $squares f64) (local $weighted f64) (local $invalid f64)
    (block $done
      (loop $cells
        (br_if $done (i32.ge_s (local.get $c) (local.get $C)))
        (local.set $a (f64.load (i32.add (local.get $weights) (i32.shl (local.get $c) (i32.const 3)))))
        (if (i32.eqz (i32.load8_u (i32.add (local.get $valid) (local.get $c))))
          (then (local.set $invalid (f64.add (local.get $invalid) (f64.const 1)))))
        (if (f64.gt (local.get $a) (f64.const 0))
          (then
            (local.set $total (f64.add (local.get $total) (local.get $a)))
            (local.set $squares (f64.add (local.get $squares) (f64.mul (local.get $a) (local.get $a))))
            (local.set $weighted
              (f64.add (local.get $weighted) (f64.mul (local.get $a) (f64.load (i32.add (local.get $yhats) (i32.shl (local.get $c) (i32.const 3)))))))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $cells)))
    (f64.store (local.get $out) (local.get $total))
    (f64.store offset=8 (local.get $out) (local.get $squares))
    (f64.store offset=16 (local.get $out) (local.get $weighted))
    (f64.store offset=24 (local.get $out) (local.get $invalid)))

  ;; solo.ts soloVotes: votes[i] = ybar + count (w_i - 1 / count) (y_i - ybar) (choices.ts
  ;; soloVote) where mask[i] is not NaN, NaN where it is.
  (func (export "soloVotes") (param $w i32) (param $y i32) (param $mask i32) (param $ybar f64) (param $count f64) (param $n i32) (param $votes i32)
    (local $i i32) (local $at i32) (local $v f64)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $at (i32.shl (local.get $i) (i32.const 3)))
        (local.set $v (f64.const nan))
        (if (f64.eq (f64.load (i32.add (local.get $mask) (local.get $at))) (f64.load (i32.add (local.get $mask) (local.get $at))))
          (then
            (local.set $v
              (f64.add (local.get $ybar)
                (f64.mul
                  (f64.mul (local.get $count) (f64.sub (f64.load (i32.add (local.get $w) (local.get $at))) (f64.div (f64.const 1) (local.get $count))))
                  (f64.sub (f64.load (i32.add (local.get $y) (local.get $at))) (local.get $ybar)))))))
        (f64.store (i32.add (local.get $votes) (local.get $at)) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))

  ;; solo.ts soloStatistics: over the votes not NaN, in order, their number, mean and the means
  ;; of the 2nd, 3rd and 4th powers of their deviations, into out (5 doubles).
  (func (export "soloMoments") (param $votes i32) (param $n i32) (param $out i32)
    (local $i i32) (local $v f64) (local $m f64) (local $mean f64) (local $d f64) (local $d2 f64)
    (local $m2 f64) (local $m3 f64) (local $m4 f64)
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $v (f64.load (i32.add (local.get $votes) (i32.shl (local.get $i) (i32.const 3)))))
        (if (f64.eq (local.get $v) (local.get $v))
          (then
            (local.set $m (f64.add (local.get $m) (f64.const 1)))
            (local.set $mean (f64.add (local.get $mean) (local.get $v)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows1)))
    (local.set $mean (f64.div (local.get $mean) (local.get $m)))
    (local.set $i (i32.const 0))
    (block $done2
      (loop $rows2
        (br_if $done2 (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $v (f64.load (i32.add (local.get $votes) (i32.shl (local.get $i) (i32.const 3)))))
        (if (f64.eq (local.get $v) (local.get $v))
          (then
            (local.set $d (f64.sub (local.get $v) (local.get $mean)))
            (local.set $d2 (f64.mul (local.get $d) (local.get $d)))
            (local.set $m2 (f64.add (local.get $m2) (local.get $d2)))
            (local.set $m3 (f64.add (local.get $m3) (f64.mul (local.get $d2) (local.get $d))))
            (local.set $m4 (f64.add (local.get $m4) (f64.mul (local.get $d2) (local.get $d2))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows2)))
    (f64.store (local.get $out) (local.get $m))
    (f64.store offset=8 (local.get $out) (local.get $mean))
    (f64.store offset=16 (local.get $out) (f64.div (local.get $m2) (local.get $m)))
    (f64.store offset=24 (local.get $out) (f64.div (local.get $m3) (local.get $m)))
    (f64.store offset=32 (local.get $out) (f64.div (local.get $m4) (local.get $m))))

)
