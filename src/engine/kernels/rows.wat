;; The Grid's passes over the rows: the walk's (src/engine/walk.ts), two rows at a time (f64x2),
;; the histogram count of the percentiles (src/engine/percentile.ts), the censors' buckets and
;; their sums (src/engine/calibrate.ts `calibrateBoth`), and the cells' weights added to a Grid's
;; composite (`addWeightsOfTwo`).
;;
;; Every kernel does, lane by lane, exactly the arithmetic of its JavaScript twin in
;; rows.ts (`jsKernels`): the same operations in the same order, each one IEEE 754 double
;; arithmetic (f64x2.mul, add and sub round each lane as f64.mul, add and sub do; no fused
;; multiply-add). So the two give the same bits, and a test holds them to it.
;;
;; Arguments: arrays are byte offsets into the imported memory (16-byte aligned), n is the number
;; of rows. An odd n leaves one row for a scalar tail. `npm run gen:kernels` assembles this file
;; into rows-wasm.ts (test/engine/row-kernels.test.ts fails when that is out of date).
;;
;; Minimum and maximum: a lane keeps `v < min ? v : min` (f64x2.pmin), as the JavaScript loop
;; does; the two lanes are then combined the same way. That is the loop's answer: the scores
;; these kernels see are never -0 (level 0 is +0 and each level adds to it), so equal values
;; are equal bits, and a NaN is never taken by either.
(module
  (import "env" "memory" (memory 1))

  ;; dst[i] = src[i] - l0 u0[i] - l1 u1[i] - ... - l7 u7[i], left to right: eight columns a pass
  ;; (two passes of subtract4 made the same subtractions in the same order, with dst stored and
  ;; loaded between: at N=100,000 the walk's passes come from memory).
  (func $subtract8
    (param $dst i32) (param $src i32) (param $u i32) (param $stride i32) (param $l i32) (param $n i32)
    (local $k i32) (local $pairs i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $a4 v128) (local $a5 v128) (local $a6 v128) (local $a7 v128)
    (local $u1 i32) (local $u2 i32) (local $u3 i32) (local $u4 i32) (local $u5 i32) (local $u6 i32) (local $u7 i32)
    (local.set $a0 (v128.load64_splat offset=0 (local.get $l)))
    (local.set $a1 (v128.load64_splat offset=8 (local.get $l)))
    (local.set $a2 (v128.load64_splat offset=16 (local.get $l)))
    (local.set $a3 (v128.load64_splat offset=24 (local.get $l)))
    (local.set $a4 (v128.load64_splat offset=32 (local.get $l)))
    (local.set $a5 (v128.load64_splat offset=40 (local.get $l)))
    (local.set $a6 (v128.load64_splat offset=48 (local.get $l)))
    (local.set $a7 (v128.load64_splat offset=56 (local.get $l)))
    (local.set $u1 (i32.add (local.get $u) (local.get $stride)))
    (local.set $u2 (i32.add (local.get $u1) (local.get $stride)))
    (local.set $u3 (i32.add (local.get $u2) (local.get $stride)))
    (local.set $u4 (i32.add (local.get $u3) (local.get $stride)))
    (local.set $u5 (i32.add (local.get $u4) (local.get $stride)))
    (local.set $u6 (i32.add (local.get $u5) (local.get $stride)))
    (local.set $u7 (i32.add (local.get $u6) (local.get $stride)))
    (local.set $pairs (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    ;; Two pairs an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $k) (i32.const 32)) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a0) (v128.load (i32.add (local.get $u) (local.get $k)))))
            (f64x2.mul (local.get $a1) (v128.load (i32.add (local.get $u1) (local.get $k)))))
            (f64x2.mul (local.get $a2) (v128.load (i32.add (local.get $u2) (local.get $k)))))
            (f64x2.mul (local.get $a3) (v128.load (i32.add (local.get $u3) (local.get $k)))))
            (f64x2.mul (local.get $a4) (v128.load (i32.add (local.get $u4) (local.get $k)))))
            (f64x2.mul (local.get $a5) (v128.load (i32.add (local.get $u5) (local.get $k)))))
            (f64x2.mul (local.get $a6) (v128.load (i32.add (local.get $u6) (local.get $k)))))
            (f64x2.mul (local.get $a7) (v128.load (i32.add (local.get $u7) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a0) (v128.load (i32.add (local.get $u) (local.get $k)))))
            (f64x2.mul (local.get $a1) (v128.load (i32.add (local.get $u1) (local.get $k)))))
            (f64x2.mul (local.get $a2) (v128.load (i32.add (local.get $u2) (local.get $k)))))
            (f64x2.mul (local.get $a3) (v128.load (i32.add (local.get $u3) (local.get $k)))))
            (f64x2.mul (local.get $a4) (v128.load (i32.add (local.get $u4) (local.get $k)))))
            (f64x2.mul (local.get $a5) (v128.load (i32.add (local.get $u5) (local.get $k)))))
            (f64x2.mul (local.get $a6) (v128.load (i32.add (local.get $u6) (local.get $k)))))
            (f64x2.mul (local.get $a7) (v128.load (i32.add (local.get $u7) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a0) (v128.load (i32.add (local.get $u) (local.get $k)))))
            (f64x2.mul (local.get $a1) (v128.load (i32.add (local.get $u1) (local.get $k)))))
            (f64x2.mul (local.get $a2) (v128.load (i32.add (local.get $u2) (local.get $k)))))
            (f64x2.mul (local.get $a3) (v128.load (i32.add (local.get $u3) (local.get $k)))))
            (f64x2.mul (local.get $a4) (v128.load (i32.add (local.get $u4) (local.get $k)))))
            (f64x2.mul (local.get $a5) (v128.load (i32.add (local.get $u5) (local.get $k)))))
            (f64x2.mul (local.get $a6) (v128.load (i32.add (local.get $u6) (local.get $k)))))
            (f64x2.mul (local.get $a7) (v128.load (i32.add (local.get $u7) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.extract_lane 0
            (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub (f64x2.sub
              (v128.load64_zero (i32.add (local.get $src) (local.get $k)))
              (f64x2.mul (local.get $a0) (v128.load64_zero (i32.add (local.get $u) (local.get $k)))))
              (f64x2.mul (local.get $a1) (v128.load64_zero (i32.add (local.get $u1) (local.get $k)))))
              (f64x2.mul (local.get $a2) (v128.load64_zero (i32.add (local.get $u2) (local.get $k)))))
              (f64x2.mul (local.get $a3) (v128.load64_zero (i32.add (local.get $u3) (local.get $k)))))
              (f64x2.mul (local.get $a4) (v128.load64_zero (i32.add (local.get $u4) (local.get $k)))))
              (f64x2.mul (local.get $a5) (v128.load64_zero (i32.add (local.get $u5) (local.get $k)))))
              (f64x2.mul (local.get $a6) (v128.load64_zero (i32.add (local.get $u6) (local.get $k)))))
              (f64x2.mul (local.get $a7) (v128.load64_zero (i32.add (local.get $u7) (local.get $k))))))))))

  ;; dst[i] = src[i] - l0 u0[i] - l1 u1[i] - l2 u2[i] - l3 u3[i], left to right.
  (func $subtract4
    (param $dst i32) (param $src i32) (param $u0 i32) (param $u1 i32) (param $u2 i32) (param $u3 i32)
    (param $l0 f64) (param $l1 f64) (param $l2 f64) (param $l3 f64) (param $n i32)
    (local $k i32) (local $pairs i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local.set $a (f64x2.splat (local.get $l0)))
    (local.set $b (f64x2.splat (local.get $l1)))
    (local.set $c (f64x2.splat (local.get $l2)))
    (local.set $d (f64x2.splat (local.get $l3)))
    (local.set $pairs (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (f64x2.sub
              (f64x2.sub
                (f64x2.sub
                  (v128.load (i32.add (local.get $src) (local.get $k)))
                  (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k)))))
                (f64x2.mul (local.get $b) (v128.load (i32.add (local.get $u1) (local.get $k)))))
              (f64x2.mul (local.get $c) (v128.load (i32.add (local.get $u2) (local.get $k)))))
            (f64x2.mul (local.get $d) (v128.load (i32.add (local.get $u3) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $k))
          (f64.sub
            (f64.sub
              (f64.sub
                (f64.sub
                  (f64.load (i32.add (local.get $src) (local.get $k)))
                  (f64.mul (local.get $l0) (f64.load (i32.add (local.get $u0) (local.get $k)))))
                (f64.mul (local.get $l1) (f64.load (i32.add (local.get $u1) (local.get $k)))))
              (f64.mul (local.get $l2) (f64.load (i32.add (local.get $u2) (local.get $k)))))
            (f64.mul (local.get $l3) (f64.load (i32.add (local.get $u3) (local.get $k)))))))))

  ;; dst[i] = src[i] - l0 u0[i] - l1 u1[i] - l2 u2[i]: a level's last three columns in one pass
  ;; (subtract2 then subtract1 made the same subtractions in the same order, with dst stored and loaded between).
  (func $subtract3
    (param $dst i32) (param $src i32) (param $u0 i32) (param $u1 i32) (param $u2 i32) (param $l0 f64) (param $l1 f64) (param $l2 f64) (param $n i32)
    (local $k i32) (local $pairs i32) (local $a v128) (local $b v128) (local $c v128)
    (local.set $a (f64x2.splat (local.get $l0)))
    (local.set $b (f64x2.splat (local.get $l1)))
    (local.set $c (f64x2.splat (local.get $l2)))
    (local.set $pairs (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (f64x2.sub
              (f64x2.sub
                (v128.load (i32.add (local.get $src) (local.get $k)))
                (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k)))))
              (f64x2.mul (local.get $b) (v128.load (i32.add (local.get $u1) (local.get $k)))))
            (f64x2.mul (local.get $c) (v128.load (i32.add (local.get $u2) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $k))
          (f64.sub
            (f64.sub
              (f64.sub
                (f64.load (i32.add (local.get $src) (local.get $k)))
                (f64.mul (local.get $l0) (f64.load (i32.add (local.get $u0) (local.get $k)))))
              (f64.mul (local.get $l1) (f64.load (i32.add (local.get $u1) (local.get $k)))))
            (f64.mul (local.get $l2) (f64.load (i32.add (local.get $u2) (local.get $k)))))))))

  ;; dst[i] = src[i] - l0 u0[i] - l1 u1[i].
  (func $subtract2
    (param $dst i32) (param $src i32) (param $u0 i32) (param $u1 i32) (param $l0 f64) (param $l1 f64) (param $n i32)
    (local $k i32) (local $pairs i32) (local $a v128) (local $b v128)
    (local.set $a (f64x2.splat (local.get $l0)))
    (local.set $b (f64x2.splat (local.get $l1)))
    (local.set $pairs (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (f64x2.sub
              (v128.load (i32.add (local.get $src) (local.get $k)))
              (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k)))))
            (f64x2.mul (local.get $b) (v128.load (i32.add (local.get $u1) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $k))
          (f64.sub
            (f64.sub
              (f64.load (i32.add (local.get $src) (local.get $k)))
              (f64.mul (local.get $l0) (f64.load (i32.add (local.get $u0) (local.get $k)))))
            (f64.mul (local.get $l1) (f64.load (i32.add (local.get $u1) (local.get $k)))))))))

  ;; dst[i] = src[i] - l0 u0[i].
  (func $subtract1
    (param $dst i32) (param $src i32) (param $u0 i32) (param $l0 f64) (param $n i32)
    (local $k i32) (local $pairs i32) (local $a v128)
    (local.set $a (f64x2.splat (local.get $l0)))
    (local.set $pairs (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    ;; Two pairs an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $k) (i32.const 32)) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $k))
          (f64x2.sub
            (v128.load (i32.add (local.get $src) (local.get $k)))
            (f64x2.mul (local.get $a) (v128.load (i32.add (local.get $u0) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $k))
          (f64.sub
            (f64.load (i32.add (local.get $src) (local.get $k)))
            (f64.mul (local.get $l0) (f64.load (i32.add (local.get $u0) (local.get $k)))))))))

  ;; u_d = z_j - l_0 u_0 - l_1 u_1 - ... for a level at depth d: the u_m are `stride` bytes apart
  ;; from u_0, l is the level's row of the factor (d doubles). Eight columns a pass, then four,
  ;; then the last three in one pass, or two, then one, in that order; the first pass reads src
  ;; (z_j) and writes dst (u_d), the others update dst.
  (func $subtractLevel (export "subtractLevel")
    (param $dst i32) (param $src i32) (param $u i32) (param $stride i32) (param $l i32) (param $d i32) (param $n i32)
    (local $m i32)
    (if (i32.eqz (local.get $d))
      (then (memory.copy (local.get $dst) (local.get $src) (i32.shl (local.get $n) (i32.const 3))) (return)))
    (block $eights
      (loop $eight
        (br_if $eights (i32.gt_u (i32.add (local.get $m) (i32.const 8)) (local.get $d)))
        (call $subtract8 (local.get $dst) (local.get $src) (local.get $u) (local.get $stride) (local.get $l) (local.get $n))
        (local.set $src (local.get $dst))
        (local.set $u (i32.add (local.get $u) (i32.shl (local.get $stride) (i32.const 3))))
        (local.set $l (i32.add (local.get $l) (i32.const 64)))
        (local.set $m (i32.add (local.get $m) (i32.const 8)))
        (br $eight)))
    (block $done
      (loop $next
        (br_if $done (i32.gt_u (i32.add (local.get $m) (i32.const 4)) (local.get $d)))
        (call $subtract4 (local.get $dst) (local.get $src)
          (local.get $u)
          (i32.add (local.get $u) (local.get $stride))
          (i32.add (local.get $u) (i32.mul (local.get $stride) (i32.const 2)))
          (i32.add (local.get $u) (i32.mul (local.get $stride) (i32.const 3)))
          (f64.load offset=0 (local.get $l)) (f64.load offset=8 (local.get $l))
          (f64.load offset=16 (local.get $l)) (f64.load offset=24 (local.get $l))
          (local.get $n))
        (local.set $src (local.get $dst))
        (local.set $u (i32.add (local.get $u) (i32.shl (local.get $stride) (i32.const 2))))
        (local.set $l (i32.add (local.get $l) (i32.const 32)))
        (local.set $m (i32.add (local.get $m) (i32.const 4)))
        (br $next)))
    (if (i32.eq (i32.add (local.get $m) (i32.const 3)) (local.get $d))
      (then
        (call $subtract3 (local.get $dst) (local.get $src)
          (local.get $u) (i32.add (local.get $u) (local.get $stride)) (i32.add (local.get $u) (i32.shl (local.get $stride) (i32.const 1)))
          (f64.load offset=0 (local.get $l)) (f64.load offset=8 (local.get $l)) (f64.load offset=16 (local.get $l))
          (local.get $n))
        (return)))
    (if (i32.le_u (i32.add (local.get $m) (i32.const 2)) (local.get $d))
      (then
        (call $subtract2 (local.get $dst) (local.get $src)
          (local.get $u) (i32.add (local.get $u) (local.get $stride))
          (f64.load offset=0 (local.get $l)) (f64.load offset=8 (local.get $l))
          (local.get $n))
        (local.set $src (local.get $dst))
        (local.set $u (i32.add (local.get $u) (i32.shl (local.get $stride) (i32.const 1))))
        (local.set $l (i32.add (local.get $l) (i32.const 16)))
        (local.set $m (i32.add (local.get $m) (i32.const 2)))))
    (if (i32.lt_u (local.get $m) (local.get $d))
      (then (call $subtract1 (local.get $dst) (local.get $src) (local.get $u) (f64.load (local.get $l)) (local.get $n)))))

  ;; A level nobody visits: ud[i] = src[i] inv (src: ud, or the column itself when nothing is subtracted); relNext[i] = relPrev[i] + ud[i] vd; infoNext[i] = infoPrev[i] + ud[i]^2.
  (func $scaleFrom
    (param $ud i32) (param $src i32) (param $inv f64) (param $vd f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $n i32)
    (local $k i32) (local $end i32) (local $inv2 v128) (local $vd2 v128) (local $value v128) (local $v f64)
    (local.set $inv2 (f64x2.splat (local.get $inv)))
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $value (f64x2.mul (v128.load (i32.add (local.get $src) (local.get $k))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (v128.store (i32.add (local.get $relNext) (local.get $k))
          (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (v128.store (i32.add (local.get $infoNext) (local.get $k))
          (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $v (f64.mul (f64.load (i32.add (local.get $src) (local.get $k))) (local.get $inv)))
        (f64.store (i32.add (local.get $ud) (local.get $k)) (local.get $v))
        (f64.store (i32.add (local.get $relNext) (local.get $k))
          (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $vd))))
        (f64.store (i32.add (local.get $infoNext) (local.get $k))
          (f64.add (f64.load (i32.add (local.get $infoPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $v)))))))

  ;; scaleFrom with the level's last subtraction in the same pass: ud[i] = (src[i] - l w[i]) inv, and the rest as scaleFrom.
  (func $scaleFrom1
    (param $ud i32) (param $src i32) (param $w i32) (param $l f64) (param $inv f64) (param $vd f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $n i32)
    (local $k i32) (local $l2 v128) (local $end i32) (local $inv2 v128) (local $vd2 v128) (local $value v128) (local $v f64)
    (local.set $inv2 (f64x2.splat (local.get $inv)))
    (local.set $l2 (f64x2.splat (local.get $l)))
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $value (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $src) (local.get $k))) (f64x2.mul (local.get $l2) (v128.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (v128.store (i32.add (local.get $relNext) (local.get $k))
          (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (v128.store (i32.add (local.get $infoNext) (local.get $k))
          (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $v (f64.mul (f64.sub (f64.load (i32.add (local.get $src) (local.get $k))) (f64.mul (local.get $l) (f64.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv)))
        (f64.store (i32.add (local.get $ud) (local.get $k)) (local.get $v))
        (f64.store (i32.add (local.get $relNext) (local.get $k))
          (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $vd))))
        (f64.store (i32.add (local.get $infoNext) (local.get $k))
          (f64.add (f64.load (i32.add (local.get $infoPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $v)))))))

  (func $scaleFirst (export "scaleFirst")
    (param $ud i32) (param $inv f64) (param $vd f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $n i32)
    (call $scaleFrom (local.get $ud) (local.get $ud) (local.get $inv) (local.get $vd) (local.get $relPrev) (local.get $relNext) (local.get $infoPrev) (local.get $infoNext) (local.get $n)))

  ;; Another theta's level nobody visits: relNext[i] = relPrev[i] + ud[i] vd.
  (func (export "extendRelevance")
    (param $ud i32) (param $vd f64) (param $relPrev i32) (param $relNext i32) (param $n i32)
    (local $k i32) (local $end i32) (local $vd2 v128)
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (v128.store (i32.add (local.get $relNext) (local.get $k))
          (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k)))
            (f64x2.mul (v128.load (i32.add (local.get $ud) (local.get $k))) (local.get $vd2))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (f64.store (i32.add (local.get $relNext) (local.get $k))
          (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k)))
            (f64.mul (f64.load (i32.add (local.get $ud) (local.get $k))) (local.get $vd)))))))

  ;; Writes bounds[0..4) = min r, max r, min s, max s from the lanes' running values and the tail's.
  (func $writeBounds
    (param $bounds i32) (param $rMin v128) (param $rMax v128) (param $sMin v128) (param $sMax v128)
    (local $lo v128) (local $hi v128)
    ;; lane 1 against lane 0, as the running test: v < min ? v : min (and v > max ? v : max).
    (local.set $lo (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $rMin) (local.get $rMin)))
    (f64.store offset=0 (local.get $bounds) (f64x2.extract_lane 0 (f64x2.pmin (local.get $rMin) (local.get $lo))))
    (local.set $hi (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $rMax) (local.get $rMax)))
    (f64.store offset=8 (local.get $bounds) (f64x2.extract_lane 0 (f64x2.pmax (local.get $rMax) (local.get $hi))))
    (local.set $lo (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $sMin) (local.get $sMin)))
    (f64.store offset=16 (local.get $bounds) (f64x2.extract_lane 0 (f64x2.pmin (local.get $sMin) (local.get $lo))))
    (local.set $hi (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $sMax) (local.get $sMax)))
    (f64.store offset=24 (local.get $bounds) (f64x2.extract_lane 0 (f64x2.pmax (local.get $sMax) (local.get $hi)))))

;; Scalar running bounds for the tail row: v < min ? v : min, v > max ? v : max.
  (func $below (param $v f64) (param $min f64) (result f64)
    (select (local.get $v) (local.get $min) (f64.lt (local.get $v) (local.get $min))))
  (func $above (param $v f64) (param $max f64) (result f64)
    (select (local.get $v) (local.get $max) (f64.gt (local.get $v) (local.get $max))))

  ;; The first theta's visited level: as scaleFrom, plus simNext[i] = relNext[i] - 0.5 infoNext[i] - half, and the bounds.
  (func $finishFrom
    (param $ud i32) (param $src i32) (param $inv f64) (param $vd f64) (param $half f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $simNext i32)
    (param $bounds i32) (param $n i32)
    (local $k i32) (local $end i32)
    (local $inv2 v128) (local $vd2 v128) (local $half2 v128) (local $point5 v128)
    (local $value v128) (local $r v128) (local $x v128) (local $s v128)
    (local $rMin v128) (local $rMax v128) (local $sMin v128) (local $sMax v128)
    (local $v f64) (local $r1 f64) (local $x1 f64) (local $s1 f64)
    (local.set $inv2 (f64x2.splat (local.get $inv)))
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $half2 (f64x2.splat (local.get $half)))
    (local.set $point5 (f64x2.splat (f64.const 0.5)))
    (local.set $rMin (f64x2.splat (f64.const inf)))
    (local.set $sMin (f64x2.splat (f64.const inf)))
    (local.set $rMax (f64x2.splat (f64.const -inf)))
    (local.set $sMax (f64x2.splat (f64.const -inf)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    ;; Two bodies an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $k) (i32.const 32)) (local.get $end)))
        (local.set $value (f64x2.mul (v128.load (i32.add (local.get $src) (local.get $k))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (local.set $value (f64x2.mul (v128.load (i32.add (local.get $src) (local.get $k))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $value (f64x2.mul (v128.load (i32.add (local.get $src) (local.get $k))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (call $writeBounds (local.get $bounds) (local.get $rMin) (local.get $rMax) (local.get $sMin) (local.get $sMax))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $v (f64.mul (f64.load (i32.add (local.get $src) (local.get $k))) (local.get $inv)))
        (f64.store (i32.add (local.get $ud) (local.get $k)) (local.get $v))
        (local.set $r1 (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $vd))))
        (local.set $x1 (f64.add (f64.load (i32.add (local.get $infoPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $v))))
        (local.set $s1 (f64.sub (f64.sub (local.get $r1) (f64.mul (f64.const 0.5) (local.get $x1))) (local.get $half)))
        (f64.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r1))
        (f64.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x1))
        (f64.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s1))
        (call $tailBounds (local.get $bounds) (local.get $r1) (local.get $s1)))))

  ;; finishFrom with the level's last subtraction in the same pass: ud[i] = (src[i] - l w[i]) inv, and the rest as finishFrom
  ;; (the same operations in the same order as subtract1 into ud, then finishFrom from ud).
  (func $finishFrom1
    (param $ud i32) (param $src i32) (param $w i32) (param $l f64) (param $inv f64) (param $vd f64) (param $half f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $simNext i32)
    (param $bounds i32) (param $n i32)
    (local $k i32) (local $l2 v128) (local $end i32)
    (local $inv2 v128) (local $vd2 v128) (local $half2 v128) (local $point5 v128)
    (local $value v128) (local $r v128) (local $x v128) (local $s v128)
    (local $rMin v128) (local $rMax v128) (local $sMin v128) (local $sMax v128)
    (local $v f64) (local $r1 f64) (local $x1 f64) (local $s1 f64)
    (local.set $inv2 (f64x2.splat (local.get $inv)))
    (local.set $l2 (f64x2.splat (local.get $l)))
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $half2 (f64x2.splat (local.get $half)))
    (local.set $point5 (f64x2.splat (f64.const 0.5)))
    (local.set $rMin (f64x2.splat (f64.const inf)))
    (local.set $sMin (f64x2.splat (f64.const inf)))
    (local.set $rMax (f64x2.splat (f64.const -inf)))
    (local.set $sMax (f64x2.splat (f64.const -inf)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    ;; Two bodies an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $k) (i32.const 32)) (local.get $end)))
        (local.set $value (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $src) (local.get $k))) (f64x2.mul (local.get $l2) (v128.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (local.set $value (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $src) (local.get $k))) (f64x2.mul (local.get $l2) (v128.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $value (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $src) (local.get $k))) (f64x2.mul (local.get $l2) (v128.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv2)))
        (v128.store (i32.add (local.get $ud) (local.get $k)) (local.get $value))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $vd2))))
        (local.set $x (f64x2.add (v128.load (i32.add (local.get $infoPrev) (local.get $k))) (f64x2.mul (local.get $value) (local.get $value))))
        (local.set $s (f64x2.sub (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (local.get $x))) (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (call $writeBounds (local.get $bounds) (local.get $rMin) (local.get $rMax) (local.get $sMin) (local.get $sMax))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $v (f64.mul (f64.sub (f64.load (i32.add (local.get $src) (local.get $k))) (f64.mul (local.get $l) (f64.load (i32.add (local.get $w) (local.get $k))))) (local.get $inv)))
        (f64.store (i32.add (local.get $ud) (local.get $k)) (local.get $v))
        (local.set $r1 (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $vd))))
        (local.set $x1 (f64.add (f64.load (i32.add (local.get $infoPrev) (local.get $k))) (f64.mul (local.get $v) (local.get $v))))
        (local.set $s1 (f64.sub (f64.sub (local.get $r1) (f64.mul (f64.const 0.5) (local.get $x1))) (local.get $half)))
        (f64.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r1))
        (f64.store (i32.add (local.get $infoNext) (local.get $k)) (local.get $x1))
        (f64.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s1))
        (call $tailBounds (local.get $bounds) (local.get $r1) (local.get $s1)))))

  (func $finishFirst (export "finishFirst")
    (param $ud i32) (param $inv f64) (param $vd f64) (param $half f64)
    (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $simNext i32)
    (param $bounds i32) (param $n i32)
    (call $finishFrom (local.get $ud) (local.get $ud) (local.get $inv) (local.get $vd) (local.get $half) (local.get $relPrev) (local.get $relNext)
      (local.get $infoPrev) (local.get $infoNext) (local.get $simNext) (local.get $bounds) (local.get $n)))

  ;; Another theta's visited level (ud already scaled): relNext[i] = relPrev[i] + ud[i] vd,
  ;; simNext[i] = relNext[i] - 0.5 infoNext[i] - half, and the bounds.
  (func (export "finishOther")
    (param $ud i32) (param $vd f64) (param $half f64)
    (param $relPrev i32) (param $relNext i32) (param $infoNext i32) (param $simNext i32) (param $bounds i32) (param $n i32)
    (local $k i32) (local $end i32)
    (local $vd2 v128) (local $half2 v128) (local $point5 v128) (local $r v128) (local $s v128)
    (local $rMin v128) (local $rMax v128) (local $sMin v128) (local $sMax v128)
    (local $r1 f64) (local $s1 f64)
    (local.set $vd2 (f64x2.splat (local.get $vd)))
    (local.set $half2 (f64x2.splat (local.get $half)))
    (local.set $point5 (f64x2.splat (f64.const 0.5)))
    (local.set $rMin (f64x2.splat (f64.const inf)))
    (local.set $sMin (f64x2.splat (f64.const inf)))
    (local.set $rMax (f64x2.splat (f64.const -inf)))
    (local.set $sMax (f64x2.splat (f64.const -inf)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $r (f64x2.add (v128.load (i32.add (local.get $relPrev) (local.get $k)))
          (f64x2.mul (v128.load (i32.add (local.get $ud) (local.get $k))) (local.get $vd2))))
        (local.set $s (f64x2.sub
          (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (v128.load (i32.add (local.get $infoNext) (local.get $k)))))
          (local.get $half2)))
        (v128.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r))
        (v128.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (call $writeBounds (local.get $bounds) (local.get $rMin) (local.get $rMax) (local.get $sMin) (local.get $sMax))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $r1 (f64.add (f64.load (i32.add (local.get $relPrev) (local.get $k)))
          (f64.mul (f64.load (i32.add (local.get $ud) (local.get $k))) (local.get $vd))))
        (local.set $s1 (f64.sub
          (f64.sub (local.get $r1) (f64.mul (f64.const 0.5) (f64.load (i32.add (local.get $infoNext) (local.get $k)))))
          (local.get $half)))
        (f64.store (i32.add (local.get $relNext) (local.get $k)) (local.get $r1))
        (f64.store (i32.add (local.get $simNext) (local.get $k)) (local.get $s1))
        (call $tailBounds (local.get $bounds) (local.get $r1) (local.get $s1)))))

  ;; A level extended without similarity: simNext[i] = rel[i] - 0.5 info[i] - half, and the bounds.
  (func (export "finishLevel")
    (param $rel i32) (param $info i32) (param $half f64) (param $sim i32) (param $bounds i32) (param $n i32)
    (local $k i32) (local $end i32)
    (local $half2 v128) (local $point5 v128) (local $r v128) (local $s v128)
    (local $rMin v128) (local $rMax v128) (local $sMin v128) (local $sMax v128)
    (local $r1 f64) (local $s1 f64)
    (local.set $half2 (f64x2.splat (local.get $half)))
    (local.set $point5 (f64x2.splat (f64.const 0.5)))
    (local.set $rMin (f64x2.splat (f64.const inf)))
    (local.set $sMin (f64x2.splat (f64.const inf)))
    (local.set $rMax (f64x2.splat (f64.const -inf)))
    (local.set $sMax (f64x2.splat (f64.const -inf)))
    (local.set $end (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $r (v128.load (i32.add (local.get $rel) (local.get $k))))
        (local.set $s (f64x2.sub
          (f64x2.sub (local.get $r) (f64x2.mul (local.get $point5) (v128.load (i32.add (local.get $info) (local.get $k)))))
          (local.get $half2)))
        (v128.store (i32.add (local.get $sim) (local.get $k)) (local.get $s))
        (local.set $rMin (f64x2.pmin (local.get $rMin) (local.get $r)))
        (local.set $rMax (f64x2.pmax (local.get $rMax) (local.get $r)))
        (local.set $sMin (f64x2.pmin (local.get $sMin) (local.get $s)))
        (local.set $sMax (f64x2.pmax (local.get $sMax) (local.get $s)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $next)))
    (call $writeBounds (local.get $bounds) (local.get $rMin) (local.get $rMax) (local.get $sMin) (local.get $sMax))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $r1 (f64.load (i32.add (local.get $rel) (local.get $k))))
        (local.set $s1 (f64.sub
          (f64.sub (local.get $r1) (f64.mul (f64.const 0.5) (f64.load (i32.add (local.get $info) (local.get $k)))))
          (local.get $half)))
        (f64.store (i32.add (local.get $sim) (local.get $k)) (local.get $s1))
        (call $tailBounds (local.get $bounds) (local.get $r1) (local.get $s1)))))

  ;; Folds the tail row (the last, after every pair) into the bounds the pairs wrote.
  (func $tailBounds (param $bounds i32) (param $r f64) (param $s f64)
    (f64.store offset=0 (local.get $bounds) (call $below (local.get $r) (f64.load offset=0 (local.get $bounds))))
    (f64.store offset=8 (local.get $bounds) (call $above (local.get $r) (f64.load offset=8 (local.get $bounds))))
    (f64.store offset=16 (local.get $bounds) (call $below (local.get $s) (f64.load offset=16 (local.get $bounds))))
    (f64.store offset=24 (local.get $bounds) (call $above (local.get $s) (f64.load offset=24 (local.get $bounds)))))

;; The counting pass of two histogram selects (percentile.ts `percentilesOfTwo`): for each row i,
  ;; its bin in a and in b, ((v - min) * scale) truncated; that bin's count goes up, and
  ;; previous[i] links i to the bin's last row before it. A bin's last row and count are one i64
  ;; of the table (last row in its low half, the i32 at 2 bin; count in its high half, at
  ;; 2 bin + 1), read and written at once: a row costs one load and two stores (its link, the
  ;; entry's low half stored as it is, and its bin's entry, (entry & ~0xffffffff) + 2^32 + i: three
  ;; instructions where the count in the low half took five; docs/architecture.md). Previous is i32. The caller guarantees every value lies in [min, max], both
  ;; finite, with a finite scale, so that the bin is in range, and fewer than 2^31 values. Two rows
  ;; a pass: their bins by f64x2 arithmetic, then counted and linked one row after the other, in a
  ;; and then in b, as the plain loops do. A bin is floor((v - min) scale) + 2^52, whose low 32 bits
  ;; are the bin (an integer k below 2^52 plus 2^52 is exact, k in the low bits of the mantissa):
  ;; the value `| 0` gives, since (v - min) scale is never negative, in two instructions where
  ;; i32x4.trunc_sat_f64x2_s_zero took four or five (so each bin is i32 lane 0 or 2). An odd n leaves the
  ;; last row to a scalar tail, whose truncation is i32.trunc_f64_s (it would trap on a NaN or an
  ;; infinity; V8's saturating scalar i32.trunc_sat_f64_s made the pass about half as slow again).
  (func $histogramTwo (export "histogramTwo")
    (param $a i32) (param $minA f64) (param $scaleA f64) (param $tableA i32) (param $previousA i32)
    (param $b i32) (param $minB f64) (param $scaleB f64) (param $tableB i32) (param $previousB i32)
    (param $n i32)
    (local $i i32) (local $k i32) (local $end i32) (local $at i32) (local $pair i64)
    (local $binsA v128) (local $binsB v128) (local $magic v128) (local $minA2 v128) (local $scaleA2 v128) (local $minB2 v128) (local $scaleB2 v128)
    (local.set $magic (f64x2.splat (f64.const 0x1p52)))
    (local.set $minA2 (f64x2.splat (local.get $minA)))
    (local.set $scaleA2 (f64x2.splat (local.get $scaleA)))
    (local.set $minB2 (f64x2.splat (local.get $minB)))
    (local.set $scaleB2 (f64x2.splat (local.get $scaleB)))
    (local.set $end (i32.and (local.get $n) (i32.const -2)))
    ;; Two pairs an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        ;; Each bin's byte offset in its table: 8 bin.
        (local.set $binsA (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $a) (local.get $k))) (local.get $minA2)) (local.get $scaleA2))) (local.get $magic)) (i32.const 3)))
        (local.set $binsB (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $b) (local.get $k))) (local.get $minB2)) (local.get $scaleB2))) (local.get $magic)) (i32.const 3)))
        (local.set $k (i32.shl (local.get $i) (i32.const 2)))
        ;; The first row in a, then in b; then the second row.
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 0 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 0 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 2 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 2 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        ;; Each bin's byte offset in its table: 8 bin.
        (local.set $binsA (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $a) (local.get $k))) (local.get $minA2)) (local.get $scaleA2))) (local.get $magic)) (i32.const 3)))
        (local.set $binsB (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $b) (local.get $k))) (local.get $minB2)) (local.get $scaleB2))) (local.get $magic)) (i32.const 3)))
        (local.set $k (i32.shl (local.get $i) (i32.const 2)))
        ;; The first row in a, then in b; then the second row.
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 0 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 0 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 2 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 2 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        ;; Each bin's byte offset in its table: 8 bin.
        (local.set $binsA (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $a) (local.get $k))) (local.get $minA2)) (local.get $scaleA2))) (local.get $magic)) (i32.const 3)))
        (local.set $binsB (i32x4.shl (f64x2.add (f64x2.floor (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $b) (local.get $k))) (local.get $minB2)) (local.get $scaleB2))) (local.get $magic)) (i32.const 3)))
        (local.set $k (i32.shl (local.get $i) (i32.const 2)))
        ;; The first row in a, then in b; then the second row.
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 0 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 0 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $at (i32.add (local.get $tableA) (i32x4.extract_lane 2 (local.get $binsA))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32x4.extract_lane 2 (local.get $binsB))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 offset=4 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    ;; An odd n leaves the last row, counted alone.
    (block $tailDone
      (loop $tail
        (br_if $tailDone (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $k (i32.shl (local.get $i) (i32.const 2)))
        (local.set $at (i32.add (local.get $tableA) (i32.shl
          (i32.trunc_f64_s (f64.mul (f64.sub (f64.load (i32.add (local.get $a) (i32.shl (local.get $i) (i32.const 3)))) (local.get $minA)) (local.get $scaleA)))
          (i32.const 3))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousA) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $at (i32.add (local.get $tableB) (i32.shl
          (i32.trunc_f64_s (f64.mul (f64.sub (f64.load (i32.add (local.get $b) (i32.shl (local.get $i) (i32.const 3)))) (local.get $minB)) (local.get $scaleB)))
          (i32.const 3))))
        (local.set $pair (i64.load (local.get $at)))
        (i64.store32 (i32.add (local.get $previousB) (local.get $k)) (local.get $pair))
        (i64.store (local.get $at) (i64.add (i64.and (local.get $pair) (i64.const 0xffffffff00000000)) (i64.add (i64.extend_i32_u (local.get $i)) (i64.const 0x100000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail))))

  ;; The buckets of both censors and their sums (calibrate.ts `calibrateBoth`, up to four cuts):
  ;; row i goes into bucket b = the number of cuts its signed score passes (a missing cut is NaN,
  ;; which none passes) for the relevance censor, and c for the similarity one; its terms
  ;; (1, r, r^2, r dy, r dy^2, r^2 dy^2), dy = y - ybar, are added to the six sums of its joint
  ;; bucket (b, c) (joint: 25 buckets of 48 bytes, 5 b + c, cleared here), in the order of the
  ;; rows. Then each censor's bucket sums, buckets 0 to T (the T cuts given; none reaches a bucket
  ;; beyond): the relevance censor's bucket b is (b, 0) + (b, 1) + ... + (b, T), the similarity
  ;; censor's bucket c is (0, c) + (1, c) + ... + (T, c), left to right. One read-add-write of a
  ;; bucket's sums per row instead of one per row and censor: about 3.6 -> 2.8 ns a row at
  ;; N=1,000 (docs/architecture.md); each censor's sums are the rows' in another order, so their
  ;; last bits are not those of one censor's `bucketSums` in row order (docs/methodology.md). The
  ;; three totals (sum r, sum r^2, sum r dy) go to totals[0..3): the 25 joint buckets' sums added
  ;; in bucket order, not the rows' in row order (two running sums in the loop kept V8 from
  ;; holding the rest in registers: the pass alone took 2.6 ns a row against 2.3; docs/architecture.md).
  ;;
  ;; Two rows a pass: their buckets counted by f64x2 compares (each passed cut subtracts an
  ;; all-ones lane, -1), their terms made two at a time and split into each row's three pairs by
  ;; shuffles; the first row's pairs are added to its joint bucket before the second row's, so
  ;; every sum still takes the rows in order. An odd n leaves the last row to a scalar tail.
  (func $bucketsTwo (export "bucketsTwo")
    (param $relevance i32) (param $similarity i32) (param $y i32) (param $ybar f64) (param $sign f64)
    (param $a0 f64) (param $a1 f64) (param $a2 f64) (param $a3 f64)
    (param $c0 f64) (param $c1 f64) (param $c2 f64) (param $c3 f64)
    (param $bucketsR i32) (param $bucketsS i32) (param $sumsR i32) (param $sumsS i32) (param $joint i32) (param $T i32)
    (param $totals i32) (param $n i32) (param $jointOnly i32)
    (local $i i32) (local $k i32) (local $end i32) (local $at i32) (local $b i32) (local $c i32) (local $to i32) (local $j0 i32) (local $j2 i32)
    (local $R v128) (local $DY v128) (local $RR v128) (local $RY v128) (local $RYDY v128) (local $RYRY v128)
    (local $one v128) (local $signBit v128) (local $ybar2 v128)
    (local $A0 v128) (local $A1 v128) (local $A2 v128) (local $A3 v128)
    (local $C0 v128) (local $C1 v128) (local $C2 v128) (local $C3 v128)
    (local $s v128) (local $bR v128) (local $bS v128) (local $J v128)
    (local $f v128) (local $g v128) (local $h v128)
    (local $t1 v128) (local $t2 v128)
    (local $r f64) (local $dy f64) (local $ry f64) (local $x f64) (local $br i32) (local $bs i32)
    (memory.fill (local.get $joint) (i32.const 0) (i32.const 1200))
    (local.set $one (f64x2.splat (f64.const 1)))
    ;; The scores signed by their sign bit (sign is 1 or -1): the product's double, NaN aside
    ;; (whose sign no comparison sees), in a bitwise operation rather than a multiplication.
    (local.set $signBit (i64x2.splat (i64.and (i64.reinterpret_f64 (local.get $sign)) (i64.const 0x8000000000000000))))
    (local.set $ybar2 (f64x2.splat (local.get $ybar)))
    (local.set $A0 (f64x2.splat (local.get $a0))) (local.set $A1 (f64x2.splat (local.get $a1)))
    (local.set $A2 (f64x2.splat (local.get $a2))) (local.set $A3 (f64x2.splat (local.get $a3)))
    (local.set $C0 (f64x2.splat (local.get $c0))) (local.set $C1 (f64x2.splat (local.get $c1)))
    (local.set $C2 (f64x2.splat (local.get $c2))) (local.set $C3 (f64x2.splat (local.get $c3)))
    (local.set $end (i32.and (local.get $n) (i32.const -2)))
    ;; Two bodies an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $R (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $DY (f64x2.sub (v128.load (i32.add (local.get $y) (local.get $k))) (local.get $ybar2)))
        (local.set $RR (f64x2.mul (local.get $R) (local.get $R)))
        (local.set $RY (f64x2.mul (local.get $R) (local.get $DY)))
        (local.set $RYDY (f64x2.mul (local.get $RY) (local.get $DY)))
        (local.set $RYRY (f64x2.mul (local.get $RY) (local.get $RY)))
        ;; Each row's bucket, as 0 - (s >= a0) - (s >= a1) - ... in its i64 lane.
        (local.set $s (v128.xor (local.get $signBit) (local.get $R)))
        (local.set $bR (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $A0))) (f64x2.ge (local.get $s) (local.get $A1)))
          (f64x2.ge (local.get $s) (local.get $A2))) (f64x2.ge (local.get $s) (local.get $A3))))
        (local.set $s (v128.xor (local.get $signBit) (v128.load (i32.add (local.get $similarity) (local.get $k)))))
        (local.set $bS (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $C0))) (f64x2.ge (local.get $s) (local.get $C1)))
          (f64x2.ge (local.get $s) (local.get $C2))) (f64x2.ge (local.get $s) (local.get $C3))))
        ;; Each row's joint bucket, 5 bR + bS.
        (local.set $J (i64x2.add (i64x2.add (i64x2.shl (local.get $bR) (i32.const 2)) (local.get $bR)) (local.get $bS)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RYDY) (local.get $RYRY)))
        ;; The pair's buckets: each censor's (bytes i and i + 1 of bucketsR and bucketsS), or with
        ;; jointOnly the joint ones alone, 5 bR + bS, in bucketsR (both bytes in one store, from the
        ;; two lanes the sums' addresses take too: a shuffle of J cost V8 six instructions a pair
        ;; to make its mask).
        (local.set $j0 (i32x4.extract_lane 0 (local.get $J)))
        (local.set $j2 (i32x4.extract_lane 2 (local.get $J)))
        (if (local.get $jointOnly)
          (then (i32.store16 (i32.add (local.get $bucketsR) (local.get $i)) (i32.or (local.get $j0) (i32.shl (local.get $j2) (i32.const 8)))))
          (else
            (i32.store8 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 0 (local.get $bR)))
            (i32.store8 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 0 (local.get $bS)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 2 (local.get $bR)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 2 (local.get $bS)))))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j0) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 24 25 26 27 28 29 30 31 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RYDY) (local.get $RYRY)))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j2) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $R (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $DY (f64x2.sub (v128.load (i32.add (local.get $y) (local.get $k))) (local.get $ybar2)))
        (local.set $RR (f64x2.mul (local.get $R) (local.get $R)))
        (local.set $RY (f64x2.mul (local.get $R) (local.get $DY)))
        (local.set $RYDY (f64x2.mul (local.get $RY) (local.get $DY)))
        (local.set $RYRY (f64x2.mul (local.get $RY) (local.get $RY)))
        ;; Each row's bucket, as 0 - (s >= a0) - (s >= a1) - ... in its i64 lane.
        (local.set $s (v128.xor (local.get $signBit) (local.get $R)))
        (local.set $bR (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $A0))) (f64x2.ge (local.get $s) (local.get $A1)))
          (f64x2.ge (local.get $s) (local.get $A2))) (f64x2.ge (local.get $s) (local.get $A3))))
        (local.set $s (v128.xor (local.get $signBit) (v128.load (i32.add (local.get $similarity) (local.get $k)))))
        (local.set $bS (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $C0))) (f64x2.ge (local.get $s) (local.get $C1)))
          (f64x2.ge (local.get $s) (local.get $C2))) (f64x2.ge (local.get $s) (local.get $C3))))
        ;; Each row's joint bucket, 5 bR + bS.
        (local.set $J (i64x2.add (i64x2.add (i64x2.shl (local.get $bR) (i32.const 2)) (local.get $bR)) (local.get $bS)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RYDY) (local.get $RYRY)))
        ;; The pair's buckets: each censor's (bytes i and i + 1 of bucketsR and bucketsS), or with
        ;; jointOnly the joint ones alone, 5 bR + bS, in bucketsR (both bytes in one store, from the
        ;; two lanes the sums' addresses take too: a shuffle of J cost V8 six instructions a pair
        ;; to make its mask).
        (local.set $j0 (i32x4.extract_lane 0 (local.get $J)))
        (local.set $j2 (i32x4.extract_lane 2 (local.get $J)))
        (if (local.get $jointOnly)
          (then (i32.store16 (i32.add (local.get $bucketsR) (local.get $i)) (i32.or (local.get $j0) (i32.shl (local.get $j2) (i32.const 8)))))
          (else
            (i32.store8 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 0 (local.get $bR)))
            (i32.store8 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 0 (local.get $bS)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 2 (local.get $bR)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 2 (local.get $bS)))))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j0) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 24 25 26 27 28 29 30 31 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RYDY) (local.get $RYRY)))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j2) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $R (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $DY (f64x2.sub (v128.load (i32.add (local.get $y) (local.get $k))) (local.get $ybar2)))
        (local.set $RR (f64x2.mul (local.get $R) (local.get $R)))
        (local.set $RY (f64x2.mul (local.get $R) (local.get $DY)))
        (local.set $RYDY (f64x2.mul (local.get $RY) (local.get $DY)))
        (local.set $RYRY (f64x2.mul (local.get $RY) (local.get $RY)))
        ;; Each row's bucket, as 0 - (s >= a0) - (s >= a1) - ... in its i64 lane.
        (local.set $s (v128.xor (local.get $signBit) (local.get $R)))
        (local.set $bR (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $A0))) (f64x2.ge (local.get $s) (local.get $A1)))
          (f64x2.ge (local.get $s) (local.get $A2))) (f64x2.ge (local.get $s) (local.get $A3))))
        (local.set $s (v128.xor (local.get $signBit) (v128.load (i32.add (local.get $similarity) (local.get $k)))))
        (local.set $bS (i64x2.sub (i64x2.sub (i64x2.sub (i64x2.sub (v128.const i64x2 0 0)
          (f64x2.ge (local.get $s) (local.get $C0))) (f64x2.ge (local.get $s) (local.get $C1)))
          (f64x2.ge (local.get $s) (local.get $C2))) (f64x2.ge (local.get $s) (local.get $C3))))
        ;; Each row's joint bucket, 5 bR + bS.
        (local.set $J (i64x2.add (i64x2.add (i64x2.shl (local.get $bR) (i32.const 2)) (local.get $bR)) (local.get $bS)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $RYDY) (local.get $RYRY)))
        ;; The pair's buckets: each censor's (bytes i and i + 1 of bucketsR and bucketsS), or with
        ;; jointOnly the joint ones alone, 5 bR + bS, in bucketsR (both bytes in one store, from the
        ;; two lanes the sums' addresses take too: a shuffle of J cost V8 six instructions a pair
        ;; to make its mask).
        (local.set $j0 (i32x4.extract_lane 0 (local.get $J)))
        (local.set $j2 (i32x4.extract_lane 2 (local.get $J)))
        (if (local.get $jointOnly)
          (then (i32.store16 (i32.add (local.get $bucketsR) (local.get $i)) (i32.or (local.get $j0) (i32.shl (local.get $j2) (i32.const 8)))))
          (else
            (i32.store8 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 0 (local.get $bR)))
            (i32.store8 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 0 (local.get $bS)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsR) (local.get $i)) (i32x4.extract_lane 2 (local.get $bR)))
            (i32.store8 offset=1 (i32.add (local.get $bucketsS) (local.get $i)) (i32x4.extract_lane 2 (local.get $bS)))))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j0) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $f (i8x16.shuffle 0 1 2 3 4 5 6 7 24 25 26 27 28 29 30 31 (local.get $one) (local.get $R)))
        (local.set $g (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RR) (local.get $RY)))
        (local.set $h (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $RYDY) (local.get $RYRY)))
        (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $j2) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        ;; The last row alone, its terms as the pairs made them: (1, r), (r r, r dy), (r dy dy, r dy r dy).
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r (f64.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $dy (f64.sub (f64.load (i32.add (local.get $y) (local.get $k))) (local.get $ybar)))
        (local.set $ry (f64.mul (local.get $r) (local.get $dy)))
        (local.set $f (f64x2.replace_lane 1 (local.get $one) (local.get $r)))
        (local.set $g (f64x2.replace_lane 1 (f64x2.splat (f64.mul (local.get $r) (local.get $r))) (local.get $ry)))
        (local.set $h (f64x2.replace_lane 1 (f64x2.splat (f64.mul (local.get $ry) (local.get $dy))) (f64.mul (local.get $ry) (local.get $ry))))
        (local.set $x (f64.mul (local.get $sign) (local.get $r)))
        (local.set $br (i32.add
          (i32.add (f64.ge (local.get $x) (local.get $a0)) (f64.ge (local.get $x) (local.get $a1)))
          (i32.add (f64.ge (local.get $x) (local.get $a2)) (f64.ge (local.get $x) (local.get $a3)))))
        (local.set $x (f64.mul (local.get $sign) (f64.load (i32.add (local.get $similarity) (local.get $k)))))
        (local.set $bs (i32.add
          (i32.add (f64.ge (local.get $x) (local.get $c0)) (f64.ge (local.get $x) (local.get $c1)))
          (i32.add (f64.ge (local.get $x) (local.get $c2)) (f64.ge (local.get $x) (local.get $c3)))))
        (if (local.get $jointOnly)
          (then (i32.store8 (i32.add (local.get $bucketsR) (local.get $i)) (i32.add (i32.mul (local.get $br) (i32.const 5)) (local.get $bs))))
          (else
            (i32.store8 (i32.add (local.get $bucketsR) (local.get $i)) (local.get $br))
            (i32.store8 (i32.add (local.get $bucketsS) (local.get $i)) (local.get $bs))))
        (local.set $at (i32.add (local.get $joint) (i32.mul (i32.add (i32.mul (local.get $br) (i32.const 5)) (local.get $bs)) (i32.const 48))))
        (v128.store offset=0 (local.get $at) (f64x2.add (v128.load offset=0 (local.get $at)) (local.get $f)))
        (v128.store offset=16 (local.get $at) (f64x2.add (v128.load offset=16 (local.get $at)) (local.get $g)))
        (v128.store offset=32 (local.get $at) (f64x2.add (v128.load offset=32 (local.get $at)) (local.get $h)))))
    ;; totals: the joint buckets' sums added in bucket order, 0 to 24 (buckets past T are 0); sum r
    ;; is lane 1 of the first pair, sum r^2 and sum r dy the second pair.
    (local.set $at (local.get $joint))
    (loop $total
      (local.set $t1 (f64x2.add (local.get $t1) (v128.load offset=0 (local.get $at))))
      (local.set $t2 (f64x2.add (local.get $t2) (v128.load offset=16 (local.get $at))))
      (local.set $at (i32.add (local.get $at) (i32.const 48)))
      (br_if $total (i32.lt_u (local.get $at) (i32.add (local.get $joint) (i32.const 1200)))))
    (f64.store offset=0 (local.get $totals) (f64x2.extract_lane 1 (local.get $t1)))
    (v128.store offset=8 (local.get $totals) (local.get $t2))
    ;; Each censor's bucket sums from the joint ones, buckets 0 to T: relevance bucket b the joint
    ;; (b, 0) + (b, 1) + ... + (b, T), similarity bucket c the joint (0, c) + (1, c) + ... + (T, c).
    (local.set $b (i32.const 0))
    (loop $rowsR
      (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $b) (i32.const 240))))
      (local.set $f (v128.load offset=0 (local.get $at)))
      (local.set $g (v128.load offset=16 (local.get $at)))
      (local.set $h (v128.load offset=32 (local.get $at)))
      (local.set $c (i32.const 1))
      (block $endR
        (loop $colsR
          (br_if $endR (i32.gt_u (local.get $c) (local.get $T)))
          (local.set $at (i32.add (local.get $at) (i32.const 48)))
          (local.set $f (f64x2.add (local.get $f) (v128.load offset=0 (local.get $at))))
          (local.set $g (f64x2.add (local.get $g) (v128.load offset=16 (local.get $at))))
          (local.set $h (f64x2.add (local.get $h) (v128.load offset=32 (local.get $at))))
          (local.set $c (i32.add (local.get $c) (i32.const 1)))
          (br $colsR)))
      (local.set $to (i32.add (local.get $sumsR) (i32.mul (local.get $b) (i32.const 48))))
      (v128.store offset=0 (local.get $to) (local.get $f))
      (v128.store offset=16 (local.get $to) (local.get $g))
      (v128.store offset=32 (local.get $to) (local.get $h))
      (local.set $at (i32.add (local.get $joint) (i32.mul (local.get $b) (i32.const 48))))
      (local.set $f (v128.load offset=0 (local.get $at)))
      (local.set $g (v128.load offset=16 (local.get $at)))
      (local.set $h (v128.load offset=32 (local.get $at)))
      (local.set $c (i32.const 1))
      (block $endS
        (loop $colsS
          (br_if $endS (i32.gt_u (local.get $c) (local.get $T)))
          (local.set $at (i32.add (local.get $at) (i32.const 240)))
          (local.set $f (f64x2.add (local.get $f) (v128.load offset=0 (local.get $at))))
          (local.set $g (f64x2.add (local.get $g) (v128.load offset=16 (local.get $at))))
          (local.set $h (f64x2.add (local.get $h) (v128.load offset=32 (local.get $at))))
          (local.set $c (i32.add (local.get $c) (i32.const 1)))
          (br $colsS)))
      (local.set $to (i32.add (local.get $sumsS) (i32.mul (local.get $b) (i32.const 48))))
      (v128.store offset=0 (local.get $to) (local.get $f))
      (v128.store offset=16 (local.get $to) (local.get $g))
      (v128.store offset=32 (local.get $to) (local.get $h))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br_if $rowsR (i32.le_u (local.get $b) (local.get $T)))))


  ;; The weights of both censors' calibrations added to target (calibrate.ts `addWeightsOfTwo`):
  ;; on a row whose relevance r is not NaN, w = target + (baseA + slopesA[bucketA] r), then
  ;; target = w + (baseB + slopesB[bucketB] r); a NaN row is left as it is. Two rows a pass.
  (func $addWeightsTwo (export "addWeightsTwo")
    (param $relevance i32) (param $bucketsA i32) (param $slopesA i32) (param $baseA f64)
    (param $bucketsB i32) (param $slopesB i32) (param $baseB f64) (param $target i32) (param $n i32)
    (local $i i32) (local $k i32) (local $end i32)
    (local $r v128) (local $a v128) (local $b v128) (local $t v128) (local $w v128) (local $bases2 v128)
    (local $r1 f64)
    ;; Both censors' bases and a row's two slopes added first (docs/methodology.md 7.2, "The weights' pass").
    (local.set $bases2 (f64x2.splat (f64.add (local.get $baseA) (local.get $baseB))))
    (local.set $end (i32.and (local.get $n) (i32.const -2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $a (v128.load64_lane 1
          (i32.add (local.get $slopesA) (i32.shl (i32.load8_u offset=1 (i32.add (local.get $bucketsA) (local.get $i))) (i32.const 3)))
          (v128.load64_zero (i32.add (local.get $slopesA) (i32.shl (i32.load8_u (i32.add (local.get $bucketsA) (local.get $i))) (i32.const 3))))))
        (local.set $b (v128.load64_lane 1
          (i32.add (local.get $slopesB) (i32.shl (i32.load8_u offset=1 (i32.add (local.get $bucketsB) (local.get $i))) (i32.const 3)))
          (v128.load64_zero (i32.add (local.get $slopesB) (i32.shl (i32.load8_u (i32.add (local.get $bucketsB) (local.get $i))) (i32.const 3))))))
        (local.set $t (v128.load (i32.add (local.get $target) (local.get $k))))
        (local.set $w (f64x2.add (local.get $t) (f64x2.add (local.get $bases2) (f64x2.mul (f64x2.add (local.get $a) (local.get $b)) (local.get $r)))))
        ;; A NaN row keeps its target.
        (v128.store (i32.add (local.get $target) (local.get $k)) (v128.bitselect (local.get $w) (local.get $t) (f64x2.eq (local.get $r) (local.get $r))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r1 (f64.load (i32.add (local.get $relevance) (local.get $k))))
        (if (f64.eq (local.get $r1) (local.get $r1))
          (then
            (f64.store (i32.add (local.get $target) (local.get $k))
              (f64.add (f64.load (i32.add (local.get $target) (local.get $k)))
                (f64.add (f64.add (local.get $baseA) (local.get $baseB))
                  (f64.mul
                    (f64.add
                      (f64.load (i32.add (local.get $slopesA) (i32.shl (i32.load8_u (i32.add (local.get $bucketsA) (local.get $i))) (i32.const 3))))
                      (f64.load (i32.add (local.get $slopesB) (i32.shl (i32.load8_u (i32.add (local.get $bucketsB) (local.get $i))) (i32.const 3)))))
                    (local.get $r1))))))))))

  ;; `addWeightsTwo` from the joint buckets (`bucketsTwo` with jointOnly): slopes holds a row's two
  ;; slopes added, slopes[5 bR + bS] = slopesA[bR] + slopesB[bS], and base both bases added; the
  ;; same operations as `addWeightsTwo` on each censor's buckets, so the same weights.
  (func $addWeightsJoint
    (param $relevance i32) (param $buckets i32) (param $slopes i32) (param $base f64) (param $target i32) (param $n i32)
    (local $i i32) (local $k i32) (local $end i32) (local $r v128) (local $a v128) (local $t v128) (local $base2 v128) (local $r1 f64)
    (local.set $base2 (f64x2.splat (local.get $base)))
    (local.set $end (i32.and (local.get $n) (i32.const -2)))
    ;; Two pairs an iteration while two fit (docs/architecture.md "Two pairs an iteration"), then one.
    (block $doneTwo
      (loop $nextTwo
        (br_if $doneTwo (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $a (v128.load64_lane 1
          (i32.add (local.get $slopes) (i32.shl (i32.load8_u offset=1 (i32.add (local.get $buckets) (local.get $i))) (i32.const 3)))
          (v128.load64_zero (i32.add (local.get $slopes) (i32.shl (i32.load8_u (i32.add (local.get $buckets) (local.get $i))) (i32.const 3))))))
        (local.set $t (v128.load (i32.add (local.get $target) (local.get $k))))
        ;; A NaN row keeps its target.
        (v128.store (i32.add (local.get $target) (local.get $k))
          (v128.bitselect
            (f64x2.add (local.get $t) (f64x2.add (local.get $base2) (f64x2.mul (local.get $a) (local.get $r))))
            (local.get $t)
            (f64x2.eq (local.get $r) (local.get $r))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $a (v128.load64_lane 1
          (i32.add (local.get $slopes) (i32.shl (i32.load8_u offset=1 (i32.add (local.get $buckets) (local.get $i))) (i32.const 3)))
          (v128.load64_zero (i32.add (local.get $slopes) (i32.shl (i32.load8_u (i32.add (local.get $buckets) (local.get $i))) (i32.const 3))))))
        (local.set $t (v128.load (i32.add (local.get $target) (local.get $k))))
        ;; A NaN row keeps its target.
        (v128.store (i32.add (local.get $target) (local.get $k))
          (v128.bitselect
            (f64x2.add (local.get $t) (f64x2.add (local.get $base2) (f64x2.mul (local.get $a) (local.get $r))))
            (local.get $t)
            (f64x2.eq (local.get $r) (local.get $r))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $nextTwo)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r (v128.load (i32.add (local.get $relevance) (local.get $k))))
        (local.set $a (v128.load64_lane 1
          (i32.add (local.get $slopes) (i32.shl (i32.load8_u offset=1 (i32.add (local.get $buckets) (local.get $i))) (i32.const 3)))
          (v128.load64_zero (i32.add (local.get $slopes) (i32.shl (i32.load8_u (i32.add (local.get $buckets) (local.get $i))) (i32.const 3))))))
        (local.set $t (v128.load (i32.add (local.get $target) (local.get $k))))
        ;; A NaN row keeps its target.
        (v128.store (i32.add (local.get $target) (local.get $k))
          (v128.bitselect
            (f64x2.add (local.get $t) (f64x2.add (local.get $base2) (f64x2.mul (local.get $a) (local.get $r))))
            (local.get $t)
            (f64x2.eq (local.get $r) (local.get $r))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $k (i32.shl (local.get $i) (i32.const 3)))
        (local.set $r1 (f64.load (i32.add (local.get $relevance) (local.get $k))))
        (if (f64.eq (local.get $r1) (local.get $r1))
          (then
            (f64.store (i32.add (local.get $target) (local.get $k))
              (f64.add (f64.load (i32.add (local.get $target) (local.get $k)))
                (f64.add (local.get $base)
                  (f64.mul
                    (f64.load (i32.add (local.get $slopes) (i32.shl (i32.load8_u (i32.add (local.get $buckets) (local.get $i))) (i32.const 3))))
                    (local.get $r1))))))))))

  ;; The percentiles' selection of two histograms (percentile.ts `percentilesOfTwo` on a pair in
  ;; an arena), after the plain methods of its `Histogram`, step by step and in the same order:
  ;; `open` (the bins' scale, the counts cleared), the count (`histogramTwo`), `mark` (the wanted
  ;; ranks in order, each once, and the bins that hold them), `gather`, `sortBins` and `write` (the
  ;; linear-interpolation cuts, snapped within the tie width). Only the order statistics and the
  ;; interpolations' arithmetic reach the cuts, so they are the plain path's bits.
  ;;
  ;; A histogram is a header of byte offsets (`HistogramPair`): 0 table (count and last row per
  ;; bin), 1 previous (the links), 2 starts, 3 wanted, 4 ranks, 5 rankBins, 6 rankBelow, 7 the
  ;; gathered values (f64), 8 out (the cuts, f64), 9 state (i32: 0 rankCount, 1 wantedCount,
  ;; 2 gathered, 3 lowest, 4 highest, 5 bins), as its JavaScript fields. Every start is -1 between selects.

  ;; `Histogram.open`: the scale of count values in [min, max] (max - min finite and positive), the counts cleared.
  (func $open (param $h i32) (param $count i32) (param $min f64) (param $max f64) (result f64)
    (local $bins i32) (local $scale f64)
    ;; percentile.ts `open`: a bin a value up to DENSE_BINS (2,048) values, then one per four, at least 2,048.
    (local.set $bins (local.get $count))
    (if (i32.gt_s (local.get $bins) (i32.const 2048))
      (then (local.set $bins (select (i32.shr_s (local.get $count) (i32.const 2)) (i32.const 2048) (i32.gt_s (i32.shr_s (local.get $count) (i32.const 2)) (i32.const 2048))))))
    (if (i32.lt_s (local.get $bins) (i32.const 16)) (then (local.set $bins (i32.const 16))))
    (if (i32.gt_s (local.get $bins) (i32.const 4096)) (then (local.set $bins (i32.const 4096))))
    (local.set $scale (f64.div (f64.convert_i32_s (local.get $bins)) (f64.sub (local.get $max) (local.get $min))))
    (if (f64.lt (local.get $scale) (f64.const inf))
      (then
        ;; scale *= 1 - 2^-40 until the largest value falls below the last bin's end.
        (block $done
          (loop $shrink
            (br_if $done (i32.lt_s (i32.trunc_sat_f64_s (f64.mul (f64.sub (local.get $max) (local.get $min)) (local.get $scale))) (local.get $bins)))
            (local.set $scale (f64.mul (local.get $scale) (f64.const 0x1.fffffffffep-1)))
            (br $shrink))))
      (else (local.set $scale (f64.const 0))))
    (memory.fill (i32.load (local.get $h)) (i32.const 0) (i32.shl (local.get $bins) (i32.const 3)))
    (i32.store offset=20 (i32.load offset=36 (local.get $h)) (local.get $bins))
    (local.get $scale))

  ;; `Histogram.mark`: the previous select's bins unmarked, the wanted ranks listed in order (each
  ;; once; not the lowest or highest, whose values are min and max), then each one's bin, how many
  ;; values lie below it, and the wanted bins laid out one after another.
  (func $mark (param $h i32) (param $count i32) (param $min f64) (param $max f64) (param $fractions i32) (param $T i32)
    (local $table i32) (local $starts i32) (local $wanted i32) (local $ranks i32) (local $state i32)
    (local $w i32) (local $lowest i32) (local $highest i32) (local $rankCount i32) (local $t i32)
    (local $hf f64) (local $lo f64) (local $rank i32) (local $last i32) (local $k i32)
    (local $next i32) (local $wantedCount i32) (local $bin i32) (local $below i32) (local $c i32)
    (local $bins i32) (local $at i32) (local $eight v128)
    (local.set $table (i32.load (local.get $h)))
    (local.set $starts (i32.load offset=8 (local.get $h)))
    (local.set $wanted (i32.load offset=12 (local.get $h)))
    (local.set $ranks (i32.load offset=16 (local.get $h)))
    (local.set $state (i32.load offset=36 (local.get $h)))
    (local.set $bins (i32.load offset=20 (local.get $state)))
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $w) (i32.load offset=4 (local.get $state))))
        (i32.store (i32.add (local.get $starts) (i32.shl (i32.load (i32.add (local.get $wanted) (i32.shl (local.get $w) (i32.const 2)))) (i32.const 2))) (i32.const -1))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $l)))
    (local.set $lowest (select (i32.const 0) (i32.const -1) (f64.ne (local.get $min) (f64.const 0))))
    (local.set $highest (select (i32.sub (local.get $count) (i32.const 1)) (i32.const -1) (f64.ne (local.get $max) (f64.const 0))))
    (block $fd
      (loop $fl
        (br_if $fd (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $hf (f64.mul (f64.convert_i32_s (i32.sub (local.get $count) (i32.const 1))) (f64.load (i32.add (local.get $fractions) (i32.shl (local.get $t) (i32.const 3))))))
        (local.set $lo (f64.floor (local.get $hf)))
        (local.set $rank (i32.trunc_f64_s (local.get $lo)))
        (local.set $last (local.get $rank))
        (if (i32.and (f64.gt (local.get $hf) (local.get $lo)) (i32.lt_s (i32.add (local.get $rank) (i32.const 1)) (local.get $count)))
          (then (local.set $last (i32.add (local.get $rank) (i32.const 1)))))
        (block $rd
          (loop $rl
            (br_if $rd (i32.gt_s (local.get $rank) (local.get $last)))
            (block $skip
              (br_if $skip (i32.or (i32.eq (local.get $rank) (local.get $lowest)) (i32.eq (local.get $rank) (local.get $highest))))
              ;; Insert in order, once.
              (local.set $k (local.get $rankCount))
              (block $kd
                (loop $kl
                  (br_if $kd (i32.eqz (local.get $k)))
                  (br_if $kd (i32.le_s (i32.load (i32.add (local.get $ranks) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 2)))) (local.get $rank)))
                  (local.set $k (i32.sub (local.get $k) (i32.const 1)))
                  (br $kl)))
              (if (local.get $k)
                (then (br_if $skip (i32.eq (i32.load (i32.add (local.get $ranks) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 2)))) (local.get $rank)))))
              (memory.copy
                (i32.add (local.get $ranks) (i32.shl (i32.add (local.get $k) (i32.const 1)) (i32.const 2)))
                (i32.add (local.get $ranks) (i32.shl (local.get $k) (i32.const 2)))
                (i32.shl (i32.sub (local.get $rankCount) (local.get $k)) (i32.const 2)))
              (i32.store (i32.add (local.get $ranks) (i32.shl (local.get $k) (i32.const 2))) (local.get $rank))
              (local.set $rankCount (i32.add (local.get $rankCount) (i32.const 1))))
            (local.set $rank (i32.add (local.get $rank) (i32.const 1)))
            (br $rl)))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $fl)))
    ;; The bin of each rank: the first whose cumulative count exceeds it.
    (local.set $k (i32.const 0))
    (block $md
      (loop $ml
        (br_if $md (i32.ge_s (local.get $k) (local.get $rankCount)))
        (local.set $rank (i32.load (i32.add (local.get $ranks) (i32.shl (local.get $k) (i32.const 2)))))
        ;; Eight bins at a time while they all lie below the rank (their counts are i32 lanes 1 and 3 of
        ;; four loads), then one at a time: the same bin and count below it.
        (block $skipped
          (loop $skip
            (br_if $skipped (i32.gt_s (i32.add (local.get $bin) (i32.const 8)) (local.get $bins)))
            (local.set $at (i32.add (local.get $table) (i32.shl (local.get $bin) (i32.const 3))))
            (local.set $eight (v128.and
              (i32x4.add
                (i32x4.add (v128.load offset=0 (local.get $at)) (v128.load offset=16 (local.get $at)))
                (i32x4.add (v128.load offset=32 (local.get $at)) (v128.load offset=48 (local.get $at))))
              (v128.const i32x4 0 -1 0 -1)))
            (local.set $c (i32.add (i32x4.extract_lane 1 (local.get $eight)) (i32x4.extract_lane 3 (local.get $eight))))
            (br_if $skipped (i32.gt_s (i32.add (local.get $below) (local.get $c)) (local.get $rank)))
            (local.set $below (i32.add (local.get $below) (local.get $c)))
            (local.set $bin (i32.add (local.get $bin) (i32.const 8)))
            (br $skip)))
        (block $bd
          (loop $bl
            (local.set $c (i32.load offset=4 (i32.add (local.get $table) (i32.shl (local.get $bin) (i32.const 3)))))
            (br_if $bd (i32.gt_s (i32.add (local.get $below) (local.get $c)) (local.get $rank)))
            (local.set $below (i32.add (local.get $below) (local.get $c)))
            (local.set $bin (i32.add (local.get $bin) (i32.const 1)))
            (br $bl)))
        (i32.store (i32.add (i32.load offset=20 (local.get $h)) (i32.shl (local.get $k) (i32.const 2))) (local.get $bin))
        (i32.store (i32.add (i32.load offset=24 (local.get $h)) (i32.shl (local.get $k) (i32.const 2))) (local.get $below))
        (if (i32.lt_s (i32.load (i32.add (local.get $starts) (i32.shl (local.get $bin) (i32.const 2)))) (i32.const 0))
          (then
            (i32.store (i32.add (local.get $starts) (i32.shl (local.get $bin) (i32.const 2))) (local.get $next))
            (local.set $next (i32.add (local.get $next) (i32.load offset=4 (i32.add (local.get $table) (i32.shl (local.get $bin) (i32.const 3))))))
            (i32.store (i32.add (local.get $wanted) (i32.shl (local.get $wantedCount) (i32.const 2))) (local.get $bin))
            (local.set $wantedCount (i32.add (local.get $wantedCount) (i32.const 1)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $ml)))
    (i32.store (local.get $state) (local.get $rankCount))
    (i32.store offset=4 (local.get $state) (local.get $wantedCount))
    (i32.store offset=8 (local.get $state) (local.get $next))
    (i32.store offset=12 (local.get $state) (local.get $lowest))
    (i32.store offset=16 (local.get $state) (local.get $highest)))

  ;; Whether every wanted bin is sorted here: at most 256 values (by insertion; beyond, the plain path's typed-array sort).
  (func $insertable (param $h i32) (result i32)
    (local $table i32) (local $wanted i32) (local $w i32) (local $n i32)
    (local.set $table (i32.load (local.get $h)))
    (local.set $wanted (i32.load offset=12 (local.get $h)))
    (local.set $n (i32.load offset=4 (i32.load offset=36 (local.get $h))))
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $w) (local.get $n)))
        (if (i32.gt_s (i32.load offset=4 (i32.add (local.get $table) (i32.shl (i32.load (i32.add (local.get $wanted) (i32.shl (local.get $w) (i32.const 2)))) (i32.const 3)))) (i32.const 256))
          (then (return (i32.const 0))))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $l)))
    (i32.const 1))

  ;; `Histogram.gather` and `sortBins` (by insertion): each wanted bin's values copied along its
  ;; links, in the order of the rows, to the bin's start, then sorted there.
  (func $gatherSorted (param $h i32) (param $values i32)
    (local $table i32) (local $previous i32) (local $starts i32) (local $wanted i32) (local $scratch i32)
    (local $w i32) (local $n i32) (local $b i32) (local $i i32) (local $p i32) (local $from i32) (local $to i32)
    (local $k i32) (local $v f64) (local $u f64) (local $at i32) (local $typed i32)
    (local.set $table (i32.load (local.get $h)))
    (local.set $previous (i32.load offset=4 (local.get $h)))
    (local.set $starts (i32.load offset=8 (local.get $h)))
    (local.set $wanted (i32.load offset=12 (local.get $h)))
    (local.set $scratch (i32.load offset=28 (local.get $h)))
    (local.set $n (i32.load offset=4 (i32.load offset=36 (local.get $h))))
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $w) (local.get $n)))
        (local.set $b (i32.load (i32.add (local.get $wanted) (i32.shl (local.get $w) (i32.const 2)))))
        (local.set $at (i32.add (local.get $table) (i32.shl (local.get $b) (i32.const 3))))
        (local.set $i (i32.load (local.get $at)))
        (local.set $from (i32.load (i32.add (local.get $starts) (i32.shl (local.get $b) (i32.const 2)))))
        (local.set $to (i32.add (local.get $from) (i32.load offset=4 (local.get $at))))
        (local.set $p (i32.sub (local.get $to) (i32.const 1)))
        (block $gd
          (loop $gl
            (br_if $gd (i32.lt_s (local.get $p) (local.get $from)))
            (f64.store (i32.add (local.get $scratch) (i32.shl (local.get $p) (i32.const 3)))
              (f64.load (i32.add (local.get $values) (i32.shl (local.get $i) (i32.const 3)))))
            (local.set $i (i32.load (i32.add (local.get $previous) (i32.shl (local.get $i) (i32.const 2)))))
            (local.set $p (i32.sub (local.get $p) (i32.const 1)))
            (br $gl)))
        ;; Insertion sort of [from, to): each value moved down past the larger ones before it. Up to 24
        ;; values (percentile.ts INSERTION_SORT) as the plain insertion sort (equal values, -0 and 0
        ;; among them, keep their order); more as the plain path's typed-array sort orders them (-0
        ;; before 0; the values are not NaN), the only order of those values, found by insertion too.
        (local.set $typed (i32.gt_s (i32.sub (local.get $to) (local.get $from)) (i32.const 24)))
        (local.set $p (i32.add (local.get $from) (i32.const 1)))
        (block $sd
          (loop $sl
            (br_if $sd (i32.ge_s (local.get $p) (local.get $to)))
            (local.set $v (f64.load (i32.add (local.get $scratch) (i32.shl (local.get $p) (i32.const 3)))))
            (local.set $k (i32.sub (local.get $p) (i32.const 1)))
            (block $kd
              (loop $kl
                (br_if $kd (i32.lt_s (local.get $k) (local.get $from)))
                (local.set $u (f64.load (i32.add (local.get $scratch) (i32.shl (local.get $k) (i32.const 3)))))
                (br_if $kd (i32.eqz (i32.or (f64.gt (local.get $u) (local.get $v))
                  ;; A 0 after a -0, in a typed-array sort's order.
                  (i32.and (local.get $typed) (i32.and (f64.eq (local.get $u) (f64.const 0))
                    (i32.and (f64.eq (local.get $v) (f64.const 0))
                      (i64.lt_s (i64.reinterpret_f64 (local.get $v)) (i64.reinterpret_f64 (local.get $u)))))))))
                (f64.store (i32.add (local.get $scratch) (i32.shl (i32.add (local.get $k) (i32.const 1)) (i32.const 3)))
                  (f64.load (i32.add (local.get $scratch) (i32.shl (local.get $k) (i32.const 3)))))
                (local.set $k (i32.sub (local.get $k) (i32.const 1)))
                (br $kl)))
            (f64.store (i32.add (local.get $scratch) (i32.shl (i32.add (local.get $k) (i32.const 1)) (i32.const 3))) (local.get $v))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $sl)))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $l))))

  ;; `Histogram.valueAt`: min or max for the lowest or highest rank, else the rank's value in its sorted bin.
  (func $valueAt (param $h i32) (param $rank i32) (param $min f64) (param $max f64) (result f64)
    (local $state i32) (local $ranks i32) (local $lo i32) (local $hi i32) (local $mid i32)
    (local.set $state (i32.load offset=36 (local.get $h)))
    (if (i32.eq (local.get $rank) (i32.load offset=12 (local.get $state))) (then (return (local.get $min))))
    (if (i32.eq (local.get $rank) (i32.load offset=16 (local.get $state))) (then (return (local.get $max))))
    (local.set $ranks (i32.load offset=16 (local.get $h)))
    (local.set $hi (i32.sub (i32.load (local.get $state)) (i32.const 1)))
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $lo) (local.get $hi)))
        (local.set $mid (i32.shr_s (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))
        (if (i32.lt_s (i32.load (i32.add (local.get $ranks) (i32.shl (local.get $mid) (i32.const 2)))) (local.get $rank))
          (then (local.set $lo (i32.add (local.get $mid) (i32.const 1))))
          (else (local.set $hi (local.get $mid))))
        (br $l)))
    (f64.load (i32.add (i32.load offset=28 (local.get $h)) (i32.shl
      (i32.sub
        (i32.add
          (i32.load (i32.add (i32.load offset=8 (local.get $h)) (i32.shl (i32.load (i32.add (i32.load offset=20 (local.get $h)) (i32.shl (local.get $lo) (i32.const 2)))) (i32.const 2))))
          (local.get $rank))
        (i32.load (i32.add (i32.load offset=24 (local.get $h)) (i32.shl (local.get $lo) (i32.const 2)))))
      (i32.const 3)))))

  ;; `Histogram.write`: each fraction's cut, low + (h - lo)(high - low) between its two order
  ;; statistics, snapped to one of them within the width (cut.ts `snapCut`), into out.
  (func $write (param $h i32) (param $count i32) (param $fractions i32) (param $T i32) (param $min f64) (param $max f64) (param $width f64)
    (local $t i32) (local $hf f64) (local $lo f64) (local $rank i32) (local $low f64) (local $high f64) (local $cut f64) (local $out i32)
    (local.set $out (i32.load offset=32 (local.get $h)))
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $hf (f64.mul (f64.convert_i32_s (i32.sub (local.get $count) (i32.const 1))) (f64.load (i32.add (local.get $fractions) (i32.shl (local.get $t) (i32.const 3))))))
        (local.set $lo (f64.floor (local.get $hf)))
        (local.set $rank (i32.trunc_f64_s (local.get $lo)))
        (local.set $low (call $valueAt (local.get $h) (local.get $rank) (local.get $min) (local.get $max)))
        (local.set $cut (local.get $low))
        (if (i32.and (f64.gt (local.get $hf) (local.get $lo)) (i32.lt_s (i32.add (local.get $rank) (i32.const 1)) (local.get $count)))
          (then
            (local.set $high (call $valueAt (local.get $h) (i32.add (local.get $rank) (i32.const 1)) (local.get $min) (local.get $max)))
            (local.set $cut (f64.add (local.get $low) (f64.mul (f64.sub (local.get $hf) (local.get $lo)) (f64.sub (local.get $high) (local.get $low)))))
            (if (f64.le (f64.sub (local.get $cut) (local.get $low)) (local.get $width))
              (then (local.set $cut (local.get $low)))
              (else
                (if (f64.le (f64.sub (local.get $high) (local.get $cut)) (local.get $width))
                  (then (local.set $cut (local.get $high))))))))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $t) (i32.const 3))) (local.get $cut))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $l))))

  ;; Both selects: 0 when a fraction is outside [0, 1] (nothing done: the plain path takes it), 2
  ;; when a wanted bin holds more than 256 values (counted and marked: the plain gather, sort and
  ;; write finish, their sort being the typed arrays'), 1 when both histograms' cuts are in out.
  (func $selectTwo (export "selectTwo")
    (param $a i32) (param $minA f64) (param $maxA f64) (param $widthA f64) (param $hA i32)
    (param $b i32) (param $minB f64) (param $maxB f64) (param $widthB f64) (param $hB i32)
    (param $fractions i32) (param $T i32) (param $count i32) (result i32)
    (local $t i32) (local $f f64) (local $scaleA f64) (local $scaleB f64)
    (block $d
      (loop $l
        (br_if $d (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $f (f64.load (i32.add (local.get $fractions) (i32.shl (local.get $t) (i32.const 3)))))
        (if (i32.eqz (i32.and (f64.ge (local.get $f) (f64.const 0)) (f64.le (local.get $f) (f64.const 1)))) (then (return (i32.const 0))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $l)))
    (local.set $scaleA (call $open (local.get $hA) (local.get $count) (local.get $minA) (local.get $maxA)))
    (local.set $scaleB (call $open (local.get $hB) (local.get $count) (local.get $minB) (local.get $maxB)))
    (call $histogramTwo
      (local.get $a) (local.get $minA) (local.get $scaleA) (i32.load (local.get $hA)) (i32.load offset=4 (local.get $hA))
      (local.get $b) (local.get $minB) (local.get $scaleB) (i32.load (local.get $hB)) (i32.load offset=4 (local.get $hB))
      (local.get $count))
    (call $mark (local.get $hA) (local.get $count) (local.get $minA) (local.get $maxA) (local.get $fractions) (local.get $T))
    (call $mark (local.get $hB) (local.get $count) (local.get $minB) (local.get $maxB) (local.get $fractions) (local.get $T))
    (if (i32.eqz (i32.and (call $insertable (local.get $hA)) (call $insertable (local.get $hB)))) (then (return (i32.const 2))))
    (call $gatherSorted (local.get $hA) (local.get $a))
    (call $gatherSorted (local.get $hB) (local.get $b))
    (call $write (local.get $hA) (local.get $count) (local.get $fractions) (local.get $T) (local.get $minA) (local.get $maxA) (local.get $widthA))
    (call $write (local.get $hB) (local.get $count) (local.get $fractions) (local.get $T) (local.get $minB) (local.get $maxB) (local.get $widthB))
    (i32.const 1))

  ;; One censor's cells of a Grid from its bucket sums (calibrate.ts `calibrationsOf`, then the
  ;; cell loop of grid-cells.ts `evaluate` and `slopesOf`), the same operations in the same order:
  ;; the sums turned into suffix sums in place; per threshold t (at position rank[t] among the
  ;; sorted cuts) the retained rows' n, sum r, sum r^2 and sum r dy, and from them the cell's
  ;; calibration; its weight (the adjusted fit when valid, finite and positive, else 0), yhat,
  ;; validity, coefficient and shift written to cells[t], cells[8 + t], ... cells[32 + t] (five
  ;; planes of 8: a Grid's 2T cells, T <= 4, one plane per value, copied by plane); the
  ;; secondary sums (a-weighted asymmetry, agreement, outlier influence, kfit) added to
  ;; secondary[0..4) cell by cell; then the weights' slopes by bucket (slopes[0..T]) and their
  ;; common part, returned. Not for the logistic scale (its yhat needs a logarithm).
  (func $cells
    (param $sums i32) (param $rank i32) (param $T i32) (param $count f64)
    (param $totalR f64) (param $totalR2 f64) (param $totalRY f64) (param $syy f64) (param $ybar f64) (param $width f64)
    (param $multiplier f64) (param $attributes f64) (param $minRetained f64) (param $minComplement f64)
    (param $slopes i32) (param $cells i32) (param $secondary i32) (result f64)
    (local $b i32) (local $f i32) (local $t i32) (local $o i32) (local $at i32) (local $p i32)
    (local $fullVar f64) (local $n f64) (local $s1 f64) (local $s2 f64) (local $sy f64)
    (local $partVar f64) (local $coefficient f64) (local $shift f64) (local $spread f64) (local $rho f64) (local $d f64)
    (local $nc f64) (local $s1c f64) (local $s2c f64) (local $complement i32) (local $rhoC f64) (local $asymmetry f64) (local $fit f64)
    (local $diagonal f64) (local $outlier f64) (local $yhat f64) (local $adjusted f64) (local $weight f64) (local $valid f64) (local $base f64)
    ;; Suffix sums: slot b holds the sums over buckets >= b, i.e. the rows retained at position b - 1.
    (local.set $b (i32.sub (local.get $T) (i32.const 1)))
    (block $sd
      (loop $sl
        (br_if $sd (i32.lt_s (local.get $b) (i32.const 0)))
        (local.set $at (i32.add (local.get $sums) (i32.mul (local.get $b) (i32.const 48))))
        (local.set $f (i32.const 0))
        (block $fd
          (loop $fl
            (br_if $fd (i32.ge_s (local.get $f) (i32.const 48)))
            (f64.store (i32.add (local.get $at) (local.get $f))
              (f64.add (f64.load (i32.add (local.get $at) (local.get $f))) (f64.load offset=48 (i32.add (local.get $at) (local.get $f)))))
            (local.set $f (i32.add (local.get $f) (i32.const 8)))
            (br $fl)))
        (local.set $b (i32.sub (local.get $b) (i32.const 1)))
        (br $sl)))
    (local.set $fullVar (f64.div (local.get $totalR2) (f64.sub (local.get $count) (f64.const 1))))
    (block $td
      (loop $tl
        (br_if $td (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $o (i32.add (local.get $sums) (i32.mul (i32.add (i32.load (i32.add (local.get $rank) (i32.shl (local.get $t) (i32.const 2)))) (i32.const 1)) (i32.const 48))))
        (local.set $n (f64.load (local.get $o)))
        (local.set $s1 (f64.load offset=8 (local.get $o)))
        (local.set $s2 (f64.load offset=16 (local.get $o)))
        (local.set $sy (f64.load offset=24 (local.get $o)))
        (local.set $partVar (f64.div (local.get $s2) (f64.sub (local.get $n) (f64.const 1))))
        (local.set $at (i32.add (local.get $cells) (i32.shl (local.get $t) (i32.const 3))))
        (if (i32.or (f64.lt (local.get $n) (local.get $minRetained))
                    (i32.eqz (f64.gt (local.get $s2) (f64.mul (f64.mul (local.get $n) (local.get $width)) (local.get $width)))))
          (then
            ;; Invalid: no weight, yhat NaN.
            (f64.store (local.get $at) (f64.const 0))
            (f64.store offset=64 (local.get $at) (f64.const nan))
            (f64.store offset=128 (local.get $at) (f64.const 0))
            (f64.store offset=192 (local.get $at) (f64.const nan))
            (f64.store offset=256 (local.get $at) (f64.const nan)))
          (else
            (local.set $coefficient (f64.div (f64.div (local.get $fullVar) (local.get $partVar)) (f64.sub (local.get $n) (f64.const 1))))
            (local.set $shift (f64.div (local.get $s1) (local.get $count)))
            (local.set $spread (f64.sub (local.get $s2) (f64.div (f64.mul (local.get $s1) (local.get $s1)) (local.get $count))))
            ;; correlation(sy, spread, syy)
            (local.set $d (f64.sqrt (f64.mul (local.get $spread) (local.get $syy))))
            (local.set $rho (select (f64.div (local.get $sy) (local.get $d)) (f64.const 0) (f64.gt (local.get $d) (f64.const 0))))
            (local.set $nc (f64.sub (local.get $count) (local.get $n)))
            (local.set $s1c (f64.sub (local.get $totalR) (local.get $s1)))
            (local.set $s2c (f64.sub (local.get $totalR2) (local.get $s2)))
            (local.set $complement (i32.and (f64.ge (local.get $nc) (local.get $minComplement))
              (f64.gt (local.get $s2c) (f64.mul (f64.mul (local.get $nc) (local.get $width)) (local.get $width)))))
            (local.set $rhoC (f64.const 0))
            (local.set $asymmetry (f64.const 0))
            (if (local.get $complement)
              (then
                (local.set $d (f64.sqrt (f64.mul (f64.sub (local.get $s2c) (f64.div (f64.mul (local.get $s1c) (local.get $s1c)) (local.get $count))) (local.get $syy))))
                (local.set $rhoC (select (f64.div (f64.sub (local.get $totalRY) (local.get $sy)) (local.get $d)) (f64.const 0) (f64.gt (local.get $d) (f64.const 0))))
                (local.set $d (f64.sub (local.get $rho) (local.get $rhoC)))
                (local.set $asymmetry (f64.mul (f64.const 0.5) (f64.mul (local.get $d) (local.get $d))))))
            (local.set $fit (f64.mul (local.get $rho) (local.get $rho)))
            (local.set $diagonal (f64.add
              (f64.sub (f64.load offset=40 (local.get $o)) (f64.mul (f64.mul (f64.const 2) (local.get $shift)) (f64.load offset=32 (local.get $o))))
              (f64.mul (f64.mul (local.get $shift) (local.get $shift)) (local.get $syy))))
            ;; outlierInfluence(diagonal, spread syy)
            (local.set $d (f64.mul (local.get $spread) (local.get $syy)))
            (local.set $outlier (select (f64.div (local.get $diagonal) (local.get $d)) (f64.const 0) (f64.gt (local.get $d) (f64.const 0))))
            (local.set $yhat (f64.add (local.get $ybar) (f64.mul (local.get $coefficient) (local.get $sy))))
            (local.set $adjusted (f64.mul (local.get $multiplier) (f64.add (local.get $fit) (local.get $asymmetry))))
            ;; The cell's weight: valid (here), yhat finite and the adjusted fit positive.
            (local.set $valid (select (f64.const 1) (f64.const 0) (f64.eq (f64.sub (local.get $yhat) (local.get $yhat)) (f64.const 0))))
            (local.set $weight (select (local.get $adjusted) (f64.const 0)
              (i32.and (f64.eq (local.get $valid) (f64.const 1)) (f64.gt (local.get $adjusted) (f64.const 0)))))
            (f64.store (local.get $at) (local.get $weight))
            (f64.store offset=64 (local.get $at) (local.get $yhat))
            (f64.store offset=128 (local.get $at) (local.get $valid))
            (f64.store offset=192 (local.get $at) (local.get $coefficient))
            (f64.store offset=256 (local.get $at) (local.get $shift))
            (if (f64.gt (local.get $weight) (f64.const 0))
              (then
                (f64.store (local.get $secondary) (f64.add (f64.load (local.get $secondary)) (f64.mul (local.get $weight) (local.get $asymmetry))))
                (f64.store offset=8 (local.get $secondary)
                  (f64.add (f64.load offset=8 (local.get $secondary)) (f64.mul (local.get $weight) (f64.sub (local.get $fit) (local.get $outlier)))))
                (f64.store offset=16 (local.get $secondary) (f64.add (f64.load offset=16 (local.get $secondary)) (f64.mul (local.get $weight) (local.get $outlier))))
                (f64.store offset=24 (local.get $secondary)
                  (f64.add (f64.load offset=24 (local.get $secondary)) (f64.mul (local.get $weight) (f64.mul (local.get $attributes) (local.get $fit)))))))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $tl)))
    ;; slopesOf: slopes[b] sums factor coefficient over the thresholds retained in bucket b, the common part factor (1/count - coefficient shift).
    (memory.fill (local.get $slopes) (i32.const 0) (i32.shl (i32.add (local.get $T) (i32.const 1)) (i32.const 3)))
    (local.set $t (i32.const 0))
    (block $wd
      (loop $wl
        (br_if $wd (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $at (i32.add (local.get $cells) (i32.shl (local.get $t) (i32.const 3))))
        (local.set $weight (f64.load (local.get $at)))
        (if (f64.ne (local.get $weight) (f64.const 0))
          (then
            (local.set $coefficient (f64.load offset=192 (local.get $at)))
            (local.set $base (f64.add (local.get $base)
              (f64.mul (local.get $weight) (f64.sub (f64.div (f64.const 1) (local.get $count)) (f64.mul (local.get $coefficient) (f64.load offset=256 (local.get $at)))))))
            (local.set $p (i32.add (i32.load (i32.add (local.get $rank) (i32.shl (local.get $t) (i32.const 2)))) (i32.const 1)))
            (block $bd
              (loop $bl
                (br_if $bd (i32.gt_s (local.get $p) (local.get $T)))
                (local.set $o (i32.add (local.get $slopes) (i32.shl (local.get $p) (i32.const 3))))
                (f64.store (local.get $o) (f64.add (f64.load (local.get $o)) (f64.mul (local.get $weight) (local.get $coefficient))))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br $bl)))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $wl)))
    (local.get $base))

  ;; calibrate.ts `nextUp`: the least double above x (NaN for NaN and +infinity, the least subnormal for a zero).
  (func $nextUp (param $x f64) (result f64)
    (if (i32.or (f64.ne (local.get $x) (local.get $x)) (f64.eq (local.get $x) (f64.const inf))) (then (return (f64.const nan))))
    (if (f64.eq (local.get $x) (f64.const 0)) (then (return (f64.const 0x1p-1074))))
    (f64.reinterpret_i64 (i64.add (i64.reinterpret_f64 (local.get $x)) (select (i64.const 1) (i64.const -1) (f64.gt (local.get $x) (f64.const 0))))))

  ;; calibrate.ts `setBoundaries` for T cuts: their order by signed cut (`sortedOrder`'s stable
  ;; insertion sort), each threshold's rank, and the boundaries as `score >= atLeast[p]` tests
  ;; (`cutBoundary`, then `nextUp` for a strict test). 0, having written nothing, when a cut is NaN
  ;; (the plain path then keeps the order Array.prototype.sort gives).
  (func $boundaries (param $cuts i32) (param $T i32) (param $sign f64) (param $strict i32) (param $width f64)
    (param $order i32) (param $rank i32) (param $atLeast i32) (result i32)
    (local $t i32) (local $k i32) (local $key f64) (local $boundary f64)
    (block $nd
      (loop $nl
        (br_if $nd (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $key (f64.load (i32.add (local.get $cuts) (i32.shl (local.get $t) (i32.const 3)))))
        (if (f64.ne (local.get $key) (local.get $key)) (then (return (i32.const 0))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $nl)))
    (local.set $t (i32.const 0))
    (block $sd
      (loop $sl
        (br_if $sd (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $key (f64.mul (local.get $sign) (f64.load (i32.add (local.get $cuts) (i32.shl (local.get $t) (i32.const 3))))))
        (local.set $k (i32.sub (local.get $t) (i32.const 1)))
        (block $kd
          (loop $kl
            (br_if $kd (i32.lt_s (local.get $k) (i32.const 0)))
            (br_if $kd (i32.eqz (f64.gt
              (f64.sub (f64.mul (local.get $sign) (f64.load (i32.add (local.get $cuts) (i32.shl (i32.load (i32.add (local.get $order) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 3))))) (local.get $key))
              (f64.const 0))))
            (i32.store (i32.add (local.get $order) (i32.shl (i32.add (local.get $k) (i32.const 1)) (i32.const 2))) (i32.load (i32.add (local.get $order) (i32.shl (local.get $k) (i32.const 2)))))
            (local.set $k (i32.sub (local.get $k) (i32.const 1)))
            (br $kl)))
        (i32.store (i32.add (local.get $order) (i32.shl (i32.add (local.get $k) (i32.const 1)) (i32.const 2))) (local.get $t))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $sl)))
    (local.set $t (i32.const 0))
    (block $bd
      (loop $bl
        (br_if $bd (i32.ge_s (local.get $t) (local.get $T)))
        (local.set $k (i32.load (i32.add (local.get $order) (i32.shl (local.get $t) (i32.const 2)))))
        (local.set $boundary (f64.add
          (f64.mul (local.get $sign) (f64.load (i32.add (local.get $cuts) (i32.shl (local.get $k) (i32.const 3)))))
          (select (local.get $width) (f64.neg (local.get $width)) (local.get $strict))))
        (i32.store (i32.add (local.get $rank) (i32.shl (local.get $k) (i32.const 2))) (local.get $t))
        (f64.store (i32.add (local.get $atLeast) (i32.shl (local.get $t) (i32.const 3)))
          (select (call $nextUp (local.get $boundary)) (local.get $boundary) (local.get $strict)))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $bl)))
    (i32.const 1))

  ;; Cut p of T as `bucketsTwo` takes it: NaN when there is none.
  (func $cutAt (param $atLeast i32) (param $T i32) (param $p i32) (result f64)
    (if (result f64) (i32.lt_s (local.get $p) (local.get $T))
      (then (f64.load (i32.add (local.get $atLeast) (i32.shl (local.get $p) (i32.const 3)))))
      (else (f64.const nan))))

  ;; A Grid combination's calibration and cells for both censors in one call (calibrate.ts
  ;; `calibrateCellsOfTwo`), from each censor's T cuts, whose plain twin is the path it replaces,
  ;; pass by pass: each censor's `boundaries` (relevance first; 0 and nothing else done when a
  ;; cut is NaN), `bucketsTwo` (which writes buckets 0 to T's sums, 6 (T + 1) each), each censor's
  ;; `cells` (relevance first, each with its own sums, ranks, slopes and cells; the secondary
  ;; sums shared), then both censors' weights into target (`addWeightsJoint`, from the joint buckets
  ;; `bucketsTwo` stored in bucketsR alone: the weights of `addWeightsTwo`); 1 when done.
  ;; order holds 8 i32 and atLeast 8 f64: the relevance censor's 4, then the similarity's.
  (func $calibrateTwo (export "calibrateTwo")
    (param $relevance i32) (param $similarity i32) (param $y i32) (param $ybar f64) (param $sign f64) (param $strict i32)
    (param $cutsR i32) (param $cutsS i32) (param $widthS f64) (param $order i32) (param $atLeast i32)
    (param $bucketsR i32) (param $bucketsS i32) (param $sumsR i32) (param $sumsS i32) (param $joint i32) (param $totals i32) (param $n i32)
    (param $rankR i32) (param $rankS i32) (param $T i32) (param $syy f64) (param $width f64)
    (param $multiplier f64) (param $attributes f64) (param $minRetained f64) (param $minComplement f64)
    (param $slopesR i32) (param $slopesS i32) (param $cells i32) (param $secondary i32) (param $target i32) (result i32)
    (local $count f64) (local $baseR f64) (local $baseS f64) (local $atLeastS i32) (local $jointSlopes i32) (local $b i32) (local $c i32)
    (local.set $atLeastS (i32.add (local.get $atLeast) (i32.const 32)))
    (if (i32.eqz (call $boundaries (local.get $cutsR) (local.get $T) (local.get $sign) (local.get $strict) (local.get $width)
          (local.get $order) (local.get $rankR) (local.get $atLeast)))
      (then (return (i32.const 0))))
    (if (i32.eqz (call $boundaries (local.get $cutsS) (local.get $T) (local.get $sign) (local.get $strict) (local.get $widthS)
          (i32.add (local.get $order) (i32.const 16)) (local.get $rankS) (local.get $atLeastS)))
      (then (return (i32.const 0))))
    (call $bucketsTwo (local.get $relevance) (local.get $similarity) (local.get $y) (local.get $ybar) (local.get $sign)
      (call $cutAt (local.get $atLeast) (local.get $T) (i32.const 0)) (call $cutAt (local.get $atLeast) (local.get $T) (i32.const 1))
      (call $cutAt (local.get $atLeast) (local.get $T) (i32.const 2)) (call $cutAt (local.get $atLeast) (local.get $T) (i32.const 3))
      (call $cutAt (local.get $atLeastS) (local.get $T) (i32.const 0)) (call $cutAt (local.get $atLeastS) (local.get $T) (i32.const 1))
      (call $cutAt (local.get $atLeastS) (local.get $T) (i32.const 2)) (call $cutAt (local.get $atLeastS) (local.get $T) (i32.const 3))
      (local.get $bucketsR) (local.get $bucketsS) (local.get $sumsR) (local.get $sumsS) (local.get $joint) (local.get $T) (local.get $totals) (local.get $n)
      (i32.const 1))
    (local.set $count (f64.convert_i32_s (local.get $n)))
    (local.set $baseR (call $cells (local.get $sumsR) (local.get $rankR) (local.get $T) (local.get $count)
      (f64.load (local.get $totals)) (f64.load offset=8 (local.get $totals)) (f64.load offset=16 (local.get $totals))
      (local.get $syy) (local.get $ybar) (local.get $width) (local.get $multiplier) (local.get $attributes) (local.get $minRetained) (local.get $minComplement)
      (local.get $slopesR) (local.get $cells) (local.get $secondary)))
    (local.set $baseS (call $cells (local.get $sumsS) (local.get $rankS) (local.get $T) (local.get $count)
      (f64.load (local.get $totals)) (f64.load offset=8 (local.get $totals)) (f64.load offset=16 (local.get $totals))
      (local.get $syy) (local.get $ybar) (local.get $width) (local.get $multiplier) (local.get $attributes) (local.get $minRetained) (local.get $minComplement)
      (local.get $slopesS) (i32.add (local.get $cells) (i32.shl (local.get $T) (i32.const 3))) (local.get $secondary)))
    ;; The joint slopes, slopesR[b] + slopesS[c] at 5 b + c, in slopesS's entries 8 to 32 (it holds
    ;; 256; the censor's own are its first T + 1).
    (local.set $jointSlopes (i32.add (local.get $slopesS) (i32.const 64)))
    (local.set $b (i32.const 0))
    (loop $rows
      (local.set $c (i32.const 0))
      (loop $columns
        (f64.store (i32.add (local.get $jointSlopes) (i32.shl (i32.add (i32.mul (local.get $b) (i32.const 5)) (local.get $c)) (i32.const 3)))
          (f64.add
            (f64.load (i32.add (local.get $slopesR) (i32.shl (local.get $b) (i32.const 3))))
            (f64.load (i32.add (local.get $slopesS) (i32.shl (local.get $c) (i32.const 3))))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br_if $columns (i32.le_s (local.get $c) (local.get $T))))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br_if $rows (i32.le_s (local.get $b) (local.get $T))))
    (call $addWeightsJoint (local.get $relevance) (local.get $bucketsR) (local.get $jointSlopes) (f64.add (local.get $baseR) (local.get $baseS))
      (local.get $target) (local.get $n))
    (i32.const 1))

  ;; The walk's first-theta pass of a new level in one call (walk.ts `extend`): subtractLevel into
  ;; ud, then scaleFirst (a level nobody visits) or finishFirst (a visited one) on it; the very
  ;; two calls, one after the other.
  (func (export "subtractScaleFirst")
    (param $ud i32) (param $src i32) (param $u i32) (param $stride i32) (param $l i32) (param $d i32)
    (param $inv f64) (param $vd f64) (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32) (param $n i32)
    (call $subtractLevel (local.get $ud) (local.get $src) (local.get $u) (local.get $stride) (local.get $l) (local.get $d) (local.get $n))
    (call $scaleFirst (local.get $ud) (local.get $inv) (local.get $vd) (local.get $relPrev) (local.get $relNext) (local.get $infoPrev) (local.get $infoNext) (local.get $n)))
  (func (export "subtractFinishFirst")
    (param $ud i32) (param $src i32) (param $u i32) (param $stride i32) (param $l i32) (param $d i32)
    (param $inv f64) (param $vd f64) (param $half f64) (param $relPrev i32) (param $relNext i32) (param $infoPrev i32) (param $infoNext i32)
    (param $simNext i32) (param $bounds i32) (param $n i32)
    (call $subtractLevel (local.get $ud) (local.get $src) (local.get $u) (local.get $stride) (local.get $l) (local.get $d) (local.get $n))
    (call $finishFirst (local.get $ud) (local.get $inv) (local.get $vd) (local.get $half) (local.get $relPrev) (local.get $relNext)
      (local.get $infoPrev) (local.get $infoNext) (local.get $simNext) (local.get $bounds) (local.get $n)))

  ;; A Grid combination's cuts, calibration and cells in one call (calibrate.ts
  ;; `calibrateCellsOfTwo`): the cuts by `selectTwo` (cutsFrom 0: percent units), the thresholds
  ;; themselves (1: score units) or as they are (2: the caller's), then `calibrateTwo`. The fixed
  ;; arrays' offsets are a frame (`ArenaPasses`): 0 and 1 the histograms' headers, 2 the fractions,
  ;; 3 and 4 the cuts (the histograms' out), 5 order, 6 atLeast, 7 and 8 the buckets, 9 and 10 the
  ;; sums, 11 totals, 12 and 13 the ranks, 14 and 15 the slopes, 16 cells, 17 y, 18 the joint
  ;; buckets' sums (`bucketsTwo`). Returns 1 when
  ;; done; 0 when the select was not finished (tied or unbounded ranges, a fraction outside
  ;; [0, 1], a wanted bin of more than 256 values: the caller makes the cuts, then calls with 2);
  ;; 2 when a cut is NaN (nothing added: the caller's plain path).
  (func $selectCalibrateTwo (export "selectCalibrateTwo")
    (param $frame i32) (param $relevance i32) (param $similarity i32) (param $n i32) (param $T i32) (param $cutsFrom i32)
    (param $minA f64) (param $maxA f64) (param $widthA f64) (param $minB f64) (param $maxB f64) (param $widthB f64)
    (param $ybar f64) (param $syy f64) (param $sign f64) (param $strict i32) (param $multiplier f64) (param $attributes f64)
    (param $minRetained f64) (param $minComplement f64) (param $secondary i32) (param $target i32) (result i32)
    (local $t i32) (local $spanA f64) (local $spanB f64) (local $f f64)
    (if (i32.eqz (local.get $cutsFrom))
      (then
        ;; percentilesOfTwo's own tests: ranges wider than their tie widths, with finite spans.
        (local.set $spanA (f64.sub (local.get $maxA) (local.get $minA)))
        (local.set $spanB (f64.sub (local.get $maxB) (local.get $minB)))
        (if (i32.eqz (i32.and (f64.gt (local.get $spanA) (local.get $widthA)) (f64.gt (local.get $spanB) (local.get $widthB)))) (then (return (i32.const 0))))
        (if (i32.eqz (i32.and (f64.eq (f64.sub (local.get $spanA) (local.get $spanA)) (f64.const 0)) (f64.eq (f64.sub (local.get $spanB) (local.get $spanB)) (f64.const 0))))
          (then (return (i32.const 0))))
        (if (i32.ne (call $selectTwo
              (local.get $relevance) (local.get $minA) (local.get $maxA) (local.get $widthA) (i32.load (local.get $frame))
              (local.get $similarity) (local.get $minB) (local.get $maxB) (local.get $widthB) (i32.load offset=4 (local.get $frame))
              (i32.load offset=8 (local.get $frame)) (local.get $T) (local.get $n))
            (i32.const 1))
          (then (return (i32.const 0))))))
    (if (i32.eq (local.get $cutsFrom) (i32.const 1))
      (then
        (block $cd
          (loop $cl
            (br_if $cd (i32.ge_s (local.get $t) (local.get $T)))
            (local.set $f (f64.load (i32.add (i32.load offset=8 (local.get $frame)) (i32.shl (local.get $t) (i32.const 3)))))
            (f64.store (i32.add (i32.load offset=12 (local.get $frame)) (i32.shl (local.get $t) (i32.const 3))) (local.get $f))
            (f64.store (i32.add (i32.load offset=16 (local.get $frame)) (i32.shl (local.get $t) (i32.const 3))) (local.get $f))
            (local.set $t (i32.add (local.get $t) (i32.const 1)))
            (br $cl)))))
    (if (i32.eqz (call $calibrateTwo
          (local.get $relevance) (local.get $similarity) (i32.load offset=68 (local.get $frame)) (local.get $ybar) (local.get $sign) (local.get $strict)
          (i32.load offset=12 (local.get $frame)) (i32.load offset=16 (local.get $frame)) (local.get $widthB)
          (i32.load offset=20 (local.get $frame)) (i32.load offset=24 (local.get $frame))
          (i32.load offset=28 (local.get $frame)) (i32.load offset=32 (local.get $frame))
          (i32.load offset=36 (local.get $frame)) (i32.load offset=40 (local.get $frame)) (i32.load offset=72 (local.get $frame))
          (i32.load offset=44 (local.get $frame)) (local.get $n)
          (i32.load offset=48 (local.get $frame)) (i32.load offset=52 (local.get $frame)) (local.get $T) (local.get $syy) (local.get $widthA)
          (local.get $multiplier) (local.get $attributes) (local.get $minRetained) (local.get $minComplement)
          (i32.load offset=56 (local.get $frame)) (i32.load offset=60 (local.get $frame)) (i32.load offset=64 (local.get $frame))
          (local.get $secondary) (local.get $target)))
      (then (return (i32.const 2))))
    (i32.const 1))

  ;; The walk's first-theta pass of level d + 1 from column j (walk.ts `extend`), its arrays found
  ;; from a frame of the walk's tables (`WalkLevels`, written once): 0 u, 2 info, 4 relevance,
  ;; 6 similarity, 8 bounds, 10 the columns, each a base and (at + 1) the bytes between its arrays,
  ;; 12 the factor L and 13 K, 24 a leaf's scratch. subtractLevel into u_d, then finishFrom
  ;; (visited: 1, or 2 for a leaf) or scaleFrom: the operations of subtractFinishFirst or
  ;; subtractScaleFirst on those arrays, in their order, with at most three passes of u_d fewer
  ;; (no copy of a complete residual; a last single column in the scaling's pass).
  (func $levelPass
    (param $frame i32) (param $d i32) (param $j i32) (param $inv f64) (param $vd f64) (param $half f64) (param $visited i32) (param $n i32)
    (local $ud i32) (local $us i32) (local $is i32) (local $rs i32) (local $info i32) (local $rel i32) (local $r i32) (local $src i32) (local $w i32) (local $l f64) (local $infoNext i32)
    (local $fused i32) (local $chain i32) (local $relNext i32) (local $simNext i32) (local $bounds i32)
    (local.set $us (i32.load offset=4 (local.get $frame)))
    (local.set $ud (i32.add (i32.load (local.get $frame)) (i32.mul (local.get $d) (local.get $us))))
    (local.set $is (i32.load offset=12 (local.get $frame)))
    (local.set $info (i32.add (i32.load offset=8 (local.get $frame)) (i32.mul (local.get $d) (local.get $is))))
    (local.set $rs (i32.load offset=20 (local.get $frame)))
    (local.set $rel (i32.add (i32.load offset=16 (local.get $frame)) (i32.mul (local.get $d) (local.get $rs))))
    (local.set $infoNext (i32.add (local.get $info) (local.get $is)))
    ;; A leaf (visited 2: a visited level no later level extends) needs only its relevance and
    ;; similarity: its u_d and informativeness go to the frame's scratch (slot 24), one array that
    ;; stays in the caches, not to its depth's arrays (which nothing will read).
    (if (i32.eq (local.get $visited) (i32.const 2))
      (then
        (local.set $ud (i32.load offset=96 (local.get $frame)))
        (local.set $infoNext (local.get $ud))))
    ;; From column j's residual after the path's first r levels (r = min(d, R); docs/architecture.md
    ;; "Residuals of the first levels"), the rest of the subtraction: the same subtractions in the
    ;; same order as from z_j.
    (local.set $r (select (local.get $d) (i32.load offset=88 (local.get $frame)) (i32.lt_u (local.get $d) (i32.load offset=88 (local.get $frame)))))
    ;; Nothing left to subtract (r = d): the scaling reads the residual itself, no copy of it into
    ;; u_d first. One column past a multiple of four to subtract: the last one in the scaling's
    ;; pass (scaleFrom1, finishFrom1), where subtract1 would make a pass of its own.
    (local.set $src (call $residualAt (local.get $frame) (local.get $r) (local.get $j)))
    (local.set $fused (i32.eq (i32.and (i32.sub (local.get $d) (local.get $r)) (i32.const 3)) (i32.const 1)))
    (local.set $chain (i32.sub (i32.sub (local.get $d) (local.get $r)) (local.get $fused)))
    (if (local.get $chain)
      (then
        (call $subtractLevel (local.get $ud) (local.get $src)
          (i32.add (i32.load (local.get $frame)) (i32.mul (local.get $r) (local.get $us))) (local.get $us)
          (i32.add (i32.load offset=48 (local.get $frame)) (i32.shl (i32.add (i32.mul (local.get $d) (i32.load offset=52 (local.get $frame))) (local.get $r)) (i32.const 3)))
          (local.get $chain) (local.get $n))
        (local.set $src (local.get $ud))))
    ;; The fused column: u_(d - 1) and the factor's entry L[d, d - 1] (d >= 1 when fused).
    (if (local.get $fused)
      (then
        (local.set $w (i32.add (i32.load (local.get $frame)) (i32.mul (i32.sub (local.get $d) (i32.const 1)) (local.get $us))))
        (local.set $l (f64.load (i32.add (i32.load offset=48 (local.get $frame))
          (i32.shl (i32.sub (i32.add (i32.mul (local.get $d) (i32.load offset=52 (local.get $frame))) (local.get $d)) (i32.const 1)) (i32.const 3)))))))
    (local.set $relNext (i32.add (local.get $rel) (local.get $rs)))
    (if (local.get $visited)
      (then
        (local.set $simNext (i32.add (i32.load offset=24 (local.get $frame)) (i32.mul (i32.add (local.get $d) (i32.const 1)) (i32.load offset=28 (local.get $frame)))))
        (local.set $bounds (i32.add (i32.load offset=32 (local.get $frame)) (i32.mul (i32.add (local.get $d) (i32.const 1)) (i32.load offset=36 (local.get $frame)))))
        (if (local.get $fused)
          (then
            (call $finishFrom1 (local.get $ud) (local.get $src) (local.get $w) (local.get $l) (local.get $inv) (local.get $vd) (local.get $half)
              (local.get $rel) (local.get $relNext) (local.get $info) (local.get $infoNext) (local.get $simNext) (local.get $bounds) (local.get $n)))
          (else
            (call $finishFrom (local.get $ud) (local.get $src) (local.get $inv) (local.get $vd) (local.get $half)
              (local.get $rel) (local.get $relNext) (local.get $info) (local.get $infoNext) (local.get $simNext) (local.get $bounds) (local.get $n)))))
      (else
        (if (local.get $fused)
          (then
            (call $scaleFrom1 (local.get $ud) (local.get $src) (local.get $w) (local.get $l) (local.get $inv) (local.get $vd)
              (local.get $rel) (local.get $relNext) (local.get $info) (local.get $infoNext) (local.get $n)))
          (else
            (call $scaleFrom (local.get $ud) (local.get $src) (local.get $inv) (local.get $vd)
              (local.get $rel) (local.get $relNext) (local.get $info) (local.get $infoNext) (local.get $n)))))))

  ;; Level d + 1 of the walk in one call (walk.ts `extend`, first theta), the rest of the frame:
  ;; 14 the correlations (K x K), 15 the path's columns (K i32), 16 the first theta in standard
  ;; units (K), 17 its v (K), 18 its informativeness by depth (K + 1). With j = path[d]: the
  ;; factor's row d against the path's columns, left to right as the plain loop
  ;; (s = R[j, path[m]] - sum_p L[d, p] L[m, p]; L[d, m] = s / L[m, m]; diag -= L[d, m]^2);
  ;; 0 when diag is not above the tolerance (the row left as far as it got). Else L[d, d] =
  ;; sqrt(diag), v_d = (theta_j - sum_q L[d, q] v_q) (1 / L[d, d]), infoTheta[d + 1] =
  ;; infoTheta[d] + v_d^2, then levelPass with half of it; 1.
  (func $extendLevel (export "extendLevel")
    (param $frame i32) (param $d i32) (param $visited i32) (param $n i32) (param $tolerance f64) (result i32)
    (local $K i32) (local $L i32) (local $corr i32) (local $path i32) (local $v i32) (local $info i32)
    (local $j i32) (local $row i32) (local $jrow i32) (local $mrow i32) (local $m i32) (local $p i32)
    (local $s f64) (local $l f64) (local $diag f64) (local $inv f64) (local $vd f64) (local $thetaInfo f64)
    (local.set $K (i32.load offset=52 (local.get $frame)))
    (local.set $L (i32.load offset=48 (local.get $frame)))
    (local.set $corr (i32.load offset=56 (local.get $frame)))
    (local.set $path (i32.load offset=60 (local.get $frame)))
    (local.set $v (i32.load offset=68 (local.get $frame)))
    (local.set $info (i32.load offset=72 (local.get $frame)))
    (local.set $j (i32.load (i32.add (local.get $path) (i32.shl (local.get $d) (i32.const 2)))))
    (if (i32.ge_u (local.get $j) (local.get $K)) (then unreachable))
    (local.set $row (i32.add (local.get $L) (i32.shl (i32.mul (local.get $d) (local.get $K)) (i32.const 3))))
    (local.set $jrow (i32.add (local.get $corr) (i32.shl (i32.mul (local.get $j) (local.get $K)) (i32.const 3))))
    (local.set $diag (f64.load (i32.add (local.get $jrow) (i32.shl (local.get $j) (i32.const 3)))))
    (block $rows
      (loop $nextRow
        (br_if $rows (i32.ge_u (local.get $m) (local.get $d)))
        (local.set $s (f64.load (i32.add (local.get $jrow)
          (i32.shl (i32.load (i32.add (local.get $path) (i32.shl (local.get $m) (i32.const 2)))) (i32.const 3)))))
        (local.set $mrow (i32.add (local.get $L) (i32.shl (i32.mul (local.get $m) (local.get $K)) (i32.const 3))))
        (local.set $p (i32.const 0))
        (block $terms
          (loop $nextTerm
            (br_if $terms (i32.ge_u (local.get $p) (local.get $m)))
            (local.set $s (f64.sub (local.get $s)
              (f64.mul (f64.load (i32.add (local.get $row) (i32.shl (local.get $p) (i32.const 3))))
                (f64.load (i32.add (local.get $mrow) (i32.shl (local.get $p) (i32.const 3)))))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $nextTerm)))
        (local.set $l (f64.div (local.get $s) (f64.load (i32.add (local.get $mrow) (i32.shl (local.get $m) (i32.const 3))))))
        (f64.store (i32.add (local.get $row) (i32.shl (local.get $m) (i32.const 3))) (local.get $l))
        (local.set $diag (f64.sub (local.get $diag) (f64.mul (local.get $l) (local.get $l))))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $nextRow)))
    (if (i32.eqz (f64.gt (local.get $diag) (local.get $tolerance))) (then (return (i32.const 0))))
    (local.set $s (f64.sqrt (local.get $diag)))
    (f64.store (i32.add (local.get $row) (i32.shl (local.get $d) (i32.const 3))) (local.get $s))
    (local.set $inv (f64.div (f64.const 1) (local.get $s)))
    (local.set $vd (f64.load (i32.add (i32.load offset=64 (local.get $frame)) (i32.shl (local.get $j) (i32.const 3)))))
    (local.set $m (i32.const 0))
    (block $terms
      (loop $nextTerm
        (br_if $terms (i32.ge_u (local.get $m) (local.get $d)))
        (local.set $vd (f64.sub (local.get $vd)
          (f64.mul (f64.load (i32.add (local.get $row) (i32.shl (local.get $m) (i32.const 3))))
            (f64.load (i32.add (local.get $v) (i32.shl (local.get $m) (i32.const 3)))))))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $nextTerm)))
    (local.set $vd (f64.mul (local.get $vd) (local.get $inv)))
    (f64.store (i32.add (local.get $v) (i32.shl (local.get $d) (i32.const 3))) (local.get $vd))
    (local.set $thetaInfo (f64.add (f64.load (i32.add (local.get $info) (i32.shl (local.get $d) (i32.const 3))))
      (f64.mul (local.get $vd) (local.get $vd))))
    (f64.store (i32.add (local.get $info) (i32.shl (i32.add (local.get $d) (i32.const 1)) (i32.const 3))) (local.get $thetaInfo))
    (call $levelPass (local.get $frame) (local.get $d) (local.get $j) (local.get $inv) (local.get $vd)
      (f64.mul (f64.const 0.5) (local.get $thetaInfo)) (local.get $visited) (local.get $n))
    (i32.const 1))

  ;; Column j's residual after the path's first r levels (`residuals`; r = 0: z_j itself): its
  ;; address. Frame 19 the residuals' base, 20 the bytes between two columns', 21 between two
  ;; depths'.
  (func $residualAt (param $frame i32) (param $r i32) (param $j i32) (result i32)
    (if (result i32) (local.get $r)
      (then (i32.add (i32.add (i32.load offset=76 (local.get $frame)) (i32.mul (i32.sub (local.get $r) (i32.const 1)) (i32.load offset=84 (local.get $frame))))
        (i32.mul (local.get $j) (i32.load offset=80 (local.get $frame)))))
      (else (i32.add (i32.load offset=40 (local.get $frame)) (i32.mul (local.get $j) (i32.load offset=44 (local.get $frame)))))))

  ;; The residuals of level d + 1 (d below frame 22, the levels this walk keeps residuals of:
  ;; walk.ts, once the level is made): for each column j whose bit is set in mask (the columns
  ;; the levels below it add), the factor's entry l of j against the level, as extendLevel's row
  ;; loop makes it (s = R[j, path[d]] - sum_p l_jp L[d, p], p < d, from j's earlier entries,
  ;; kept at j K + p of the entries' table, frame 23; l = s / L[d, d]), kept; then residual
  ;; d + 1 of j = residual d of j - l u_d: the very subtraction a level adding j would make next.
  (func $residuals (export "residuals") (param $frame i32) (param $d i32) (param $mask i32) (param $n i32)
    (local $K i32) (local $L i32) (local $lres i32) (local $j i32) (local $p i32) (local $row i32)
    (local $s f64) (local $l f64) (local $u i32)
    (if (i32.ge_u (local.get $d) (i32.load offset=88 (local.get $frame))) (then unreachable))
    (local.set $K (i32.load offset=52 (local.get $frame)))
    (if (i32.ge_u (local.get $mask) (i32.shl (i32.const 1) (local.get $K))) (then unreachable))
    (local.set $L (i32.load offset=48 (local.get $frame)))
    (local.set $lres (i32.load offset=92 (local.get $frame)))
    (local.set $row (i32.add (local.get $L) (i32.shl (i32.mul (local.get $d) (local.get $K)) (i32.const 3))))
    (local.set $u (i32.add (i32.load (local.get $frame)) (i32.mul (local.get $d) (i32.load offset=4 (local.get $frame)))))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $mask)))
        (local.set $j (i32.ctz (local.get $mask)))
        (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
        (local.set $s (f64.load (i32.add (i32.load offset=56 (local.get $frame))
          (i32.shl (i32.add (i32.mul (local.get $j) (local.get $K))
            (i32.load (i32.add (i32.load offset=60 (local.get $frame)) (i32.shl (local.get $d) (i32.const 2))))) (i32.const 3)))))
        (local.set $p (i32.const 0))
        (block $terms
          (loop $term
            (br_if $terms (i32.ge_u (local.get $p) (local.get $d)))
            (local.set $s (f64.sub (local.get $s)
              (f64.mul (f64.load (i32.add (local.get $lres) (i32.shl (i32.add (i32.mul (local.get $j) (local.get $K)) (local.get $p)) (i32.const 3))))
                (f64.load (i32.add (local.get $row) (i32.shl (local.get $p) (i32.const 3)))))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $term)))
        (local.set $l (f64.div (local.get $s) (f64.load (i32.add (local.get $row) (i32.shl (local.get $d) (i32.const 3))))))
        (f64.store (i32.add (local.get $lres) (i32.shl (i32.add (i32.mul (local.get $j) (local.get $K)) (local.get $d)) (i32.const 3))) (local.get $l))
        ;; subtract1, which the levels' subtractions call too: a cold process (the CLI's one Grid)
        ;; runs it compiled by V8's optimising tier sooner than a kernel of the residuals' own.
        (call $subtract1
          (call $residualAt (local.get $frame) (i32.add (local.get $d) (i32.const 1)) (local.get $j))
          (call $residualAt (local.get $frame) (local.get $d) (local.get $j))
          (local.get $u) (local.get $l) (local.get $n))
        (br $next))))

  ;; A visited level and its cells in one call (walk.ts `extend`, then grid-cells.ts `evaluate`'s
  ;; calibrate.ts `calibrateCellsOfTwo`): extendLevel (visited), then selectCalibrateTwo on the
  ;; new level's relevance and similarity, their bounds and tie widths (cut.ts `tieWidth`:
  ;; tolerance max(1, |min|, |max|)), with a range's constants (f64s at $constants: 0 ybar, 1 syy,
  ;; 2 sign, 3 minRetained, 4 minComplement, 5 the tie tolerance, 6 T, 7 cutsFrom, 8 strict, 9 and
  ;; 10 the offsets of secondary and target, 11 + k the adjusted fit's multiplier for k
  ;; attributes). Returns 3 when the level is singular (nothing else done), else
  ;; selectCalibrateTwo's status.
  ;; cut.ts `tieWidth`: tolerance x max(1, |min|, |max|), Math.max's order (NaN when either is NaN).
  (func $tieWidth (export "tieWidth") (param $tolerance f64) (param $min f64) (param $max f64) (result f64)
    (f64.mul (local.get $tolerance) (f64.max (f64.max (f64.const 1) (f64.abs (local.get $min))) (f64.abs (local.get $max)))))

  (func $extendCalibrateTwo (export "extendCalibrateTwo")
    (param $walk i32) (param $d i32) (param $visited i32) (param $n i32) (param $tolerance f64) (param $cal i32) (param $constants i32) (result i32)
    (local $next i32) (local $bounds i32) (local $tie f64) (local $k i32)
    (local $b0 f64) (local $b1 f64) (local $b2 f64) (local $b3 f64)
    (if (i32.eqz (call $extendLevel (local.get $walk) (local.get $d) (local.get $visited) (local.get $n) (local.get $tolerance)))
      (then (return (i32.const 3))))
    (local.set $next (i32.add (local.get $d) (i32.const 1)))
    (local.set $bounds (i32.add (i32.load offset=32 (local.get $walk)) (i32.mul (local.get $next) (i32.load offset=36 (local.get $walk)))))
    (local.set $b0 (f64.load offset=0 (local.get $bounds)))
    (local.set $b1 (f64.load offset=8 (local.get $bounds)))
    (local.set $b2 (f64.load offset=16 (local.get $bounds)))
    (local.set $b3 (f64.load offset=24 (local.get $bounds)))
    (local.set $tie (f64.load offset=40 (local.get $constants)))
    (local.set $k (i32.add (local.get $constants) (i32.shl (i32.add (local.get $next) (i32.const 11)) (i32.const 3))))
    (call $selectCalibrateTwo (local.get $cal)
      (i32.add (i32.load offset=16 (local.get $walk)) (i32.mul (local.get $next) (i32.load offset=20 (local.get $walk))))
      (i32.add (i32.load offset=24 (local.get $walk)) (i32.mul (local.get $next) (i32.load offset=28 (local.get $walk))))
      (local.get $n)
      (i32.trunc_f64_u (f64.load offset=48 (local.get $constants)))
      (i32.trunc_f64_u (f64.load offset=56 (local.get $constants)))
      (local.get $b0) (local.get $b1) (call $tieWidth (local.get $tie) (local.get $b0) (local.get $b1))
      (local.get $b2) (local.get $b3) (call $tieWidth (local.get $tie) (local.get $b2) (local.get $b3))
      (f64.load offset=0 (local.get $constants)) (f64.load offset=8 (local.get $constants)) (f64.load offset=16 (local.get $constants))
      (i32.trunc_f64_u (f64.load offset=64 (local.get $constants)))
      (f64.load (local.get $k)) (f64.convert_i32_u (local.get $next))
      (f64.load offset=24 (local.get $constants)) (f64.load offset=32 (local.get $constants))
      (i32.trunc_f64_u (f64.load offset=72 (local.get $constants)))
      (i32.trunc_f64_u (f64.load offset=80 (local.get $constants)))))

  ;; 2 when path o's level is a leaf (the next path of the plan is there and does not begin with
  ;; path o's len columns: no later level extends it, since paths sharing a prefix are next to one
  ;; another), else 1 (the last path of a plan: the next may be in the next one).
  (func $leafOrVisited (param $plan i32) (param $o i32) (param $len i32) (result i32)
    (local $starts i32) (local $columns i32) (local $start i32) (local $next i32)
    (if (i32.ge_u (i32.add (local.get $o) (i32.const 1)) (i32.load offset=4 (local.get $plan))) (then (return (i32.const 1))))
    (local.set $starts (i32.add (i32.load offset=8 (local.get $plan)) (i32.shl (local.get $o) (i32.const 2))))
    (local.set $columns (i32.load offset=12 (local.get $plan)))
    (local.set $start (i32.load (local.get $starts)))
    (local.set $next (i32.load offset=4 (local.get $starts)))
    ;; The next path is shorter: it cannot extend this one.
    (if (i32.lt_u (i32.sub (i32.load offset=8 (local.get $starts)) (local.get $next)) (local.get $len)) (then (return (i32.const 2))))
    (select (i32.const 2) (i32.const 1)
      (i32.lt_u
        (call $commonPrefix
          (i32.add (local.get $columns) (i32.shl (local.get $start) (i32.const 2)))
          (i32.add (local.get $columns) (i32.shl (local.get $next) (i32.const 2)))
          (local.get $len))
        (local.get $len))))

  ;; How many leading i32 entries the arrays at a and b share, up to limit.
  (func $commonPrefix (param $a i32) (param $b i32) (param $limit i32) (result i32)
    (local $k i32)
    (block $differ
      (loop $next
        (br_if $differ (i32.ge_u (local.get $k) (local.get $limit)))
        (br_if $differ (i32.ne (i32.load (i32.add (local.get $a) (i32.shl (local.get $k) (i32.const 2))))
          (i32.load (i32.add (local.get $b) (i32.shl (local.get $k) (i32.const 2))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (local.get $k))

  ;; A range's walk in one call, as far as it goes (walk.ts `walkInKernel`: the loop of
  ;; `walkCombinationsMany` for one theta whose visited levels are calibrated as they are made,
  ;; the same calls in the same order). The plan is a frame of i32 (`WalkPlan`): 0 the next path,
  ;; 1 the paths, 2 their starts (count + 1) and 3 their columns, 4 the residual masks (o R + d),
  ;; 5 R (the residual levels in use), 6 the columns of scale 0 (bit j), 7 the stack's depth
  ;; (its columns are the walk frame's path), 8 the depth the path is singular from (2^31 - 1:
  ;; none), 9 the depth whose similarity the levels hold (-1: none), 10 the visits in the block,
  ;; 11 the cells a visit makes (2 T), 12 to 15 the block's weights, yhat and validity (f64) and
  ;; combinations (i32), 16 each path's combination, 17 the visits the block holds. Each path:
  ;; the common prefix with the stack kept, each new level made (extendCalibrateTwo when
  ;; visited, else extendLevel; a column of scale 0 or a singular level makes the rest of the
  ;; path singular), the residuals of its first R levels; then a visited level whose cells were
  ;; made has them copied into the block. Returns 0 when every path is done; else, with slot 0
  ;; the path: 1 it is singular, 2 its cells are not made (the caller's calibration), 3 its level
  ;; was made before and its similarity is not held (the caller's finish, then calibration), 4
  ;; the block is full (the path not begun). The state is written back to the frame.
  (func (export "walkPaths") (param $plan i32) (param $walk i32) (param $cal i32) (param $constants i32) (param $n i32) (param $tolerance f64) (result i32)
    (local $o i32) (local $count i32) (local $starts i32) (local $columns i32) (local $stack i32) (local $R i32)
    (local $top i32) (local $singularFrom i32) (local $similarityAt i32) (local $visits i32) (local $per i32)
    (local $start i32) (local $len i32) (local $common i32) (local $d i32) (local $j i32) (local $status i32)
    (local $calibrated i32) (local $mask i32) (local $cells i32) (local $at i32) (local $c i32) (local $index i32)
    (local.set $o (i32.load (local.get $plan)))
    (local.set $count (i32.load offset=4 (local.get $plan)))
    (local.set $starts (i32.load offset=8 (local.get $plan)))
    (local.set $columns (i32.load offset=12 (local.get $plan)))
    (local.set $R (i32.load offset=20 (local.get $plan)))
    (local.set $top (i32.load offset=28 (local.get $plan)))
    (local.set $singularFrom (i32.load offset=32 (local.get $plan)))
    (local.set $similarityAt (i32.load offset=36 (local.get $plan)))
    (local.set $visits (i32.load offset=40 (local.get $plan)))
    (local.set $per (i32.load offset=44 (local.get $plan)))
    (local.set $stack (i32.load offset=60 (local.get $walk)))
    (local.set $cells (i32.load offset=64 (local.get $cal)))
    (block $stop
      (loop $path
        (local.set $status (i32.const 0))
        (br_if $stop (i32.ge_u (local.get $o) (local.get $count)))
        (local.set $status (i32.const 4))
        (br_if $stop (i32.ge_u (local.get $visits) (i32.load offset=68 (local.get $plan))))
        (local.set $start (i32.load (i32.add (local.get $starts) (i32.shl (local.get $o) (i32.const 2)))))
        (local.set $len (i32.sub (i32.load offset=4 (i32.add (local.get $starts) (i32.shl (local.get $o) (i32.const 2)))) (local.get $start)))
        ;; The stack's levels this path shares are kept; a path that is a prefix of the stack makes none.
        (local.set $common (call $commonPrefix (local.get $stack) (i32.add (local.get $columns) (i32.shl (local.get $start) (i32.const 2)))
          (select (local.get $top) (local.get $len) (i32.lt_u (local.get $top) (local.get $len)))))
        (local.set $top (local.get $common))
        (if (i32.ge_s (local.get $singularFrom) (local.get $common)) (then (local.set $singularFrom (i32.const 0x7fffffff))))
        (local.set $calibrated (i32.const 0))
        (local.set $d (local.get $common))
        (block $made
          (loop $level
            (br_if $made (i32.ge_u (local.get $d) (local.get $len)))
            (local.set $j (i32.load (i32.add (local.get $columns) (i32.shl (i32.add (local.get $start) (local.get $d)) (i32.const 2)))))
            (i32.store (i32.add (local.get $stack) (i32.shl (local.get $top) (i32.const 2))) (local.get $j))
            (local.set $top (i32.add (local.get $top) (i32.const 1)))
            (block $next
              (br_if $next (i32.le_s (local.get $singularFrom) (local.get $d)))
              (if (i32.and (i32.shr_u (i32.load offset=24 (local.get $plan)) (local.get $j)) (i32.const 1))
                (then (local.set $singularFrom (local.get $d)) (br $next)))
              ;; Level d + 1 is new: a similarity made of it or of a deeper level is no more.
              (if (i32.gt_s (local.get $similarityAt) (local.get $d)) (then (local.set $similarityAt (i32.const -1))))
              (if (i32.eq (i32.add (local.get $d) (i32.const 1)) (local.get $len))
                (then
                  (local.set $status (call $extendCalibrateTwo (local.get $walk) (local.get $d) (call $leafOrVisited (local.get $plan) (local.get $o) (local.get $len))
                    (local.get $n) (local.get $tolerance) (local.get $cal) (local.get $constants)))
                  (if (i32.eq (local.get $status) (i32.const 3)) (then (local.set $singularFrom (local.get $d)) (br $next)))
                  (local.set $calibrated (i32.eq (local.get $status) (i32.const 1)))
                  (local.set $similarityAt (i32.add (local.get $d) (i32.const 1))))
                (else
                  (if (i32.eqz (call $extendLevel (local.get $walk) (local.get $d) (i32.const 0) (local.get $n) (local.get $tolerance)))
                    (then (local.set $singularFrom (local.get $d)) (br $next)))))
              (if (i32.lt_u (local.get $d) (local.get $R))
                (then
                  (local.set $mask (i32.load (i32.add (i32.load offset=16 (local.get $plan))
                    (i32.shl (i32.add (i32.mul (local.get $o) (local.get $R)) (local.get $d)) (i32.const 2)))))
                  (if (local.get $mask) (then (call $residuals (local.get $walk) (local.get $d) (local.get $mask) (local.get $n)))))))
            (local.set $d (i32.add (local.get $d) (i32.const 1)))
            (br $level)))
        ;; The visit: the caller's unless its cells were made with its level.
        (local.set $status (i32.const 1))
        (br_if $stop (i32.lt_s (local.get $singularFrom) (local.get $len)))
        (local.set $status (i32.const 3))
        (br_if $stop (i32.ne (local.get $similarityAt) (local.get $len)))
        (local.set $status (i32.const 2))
        (br_if $stop (i32.eqz (local.get $calibrated)))
        ;; Its cells' weights, yhat and validity (the calibration frame's cells, planes 8 doubles apart) into the block.
        (local.set $index (i32.load (i32.add (i32.load offset=64 (local.get $plan)) (i32.shl (local.get $o) (i32.const 2)))))
        (local.set $at (i32.mul (local.get $visits) (local.get $per)))
        (local.set $c (i32.const 0))
        (block $copied
          (loop $copy
            (br_if $copied (i32.ge_u (local.get $c) (local.get $per)))
            (f64.store (i32.add (i32.load offset=48 (local.get $plan)) (i32.shl (i32.add (local.get $at) (local.get $c)) (i32.const 3)))
              (f64.load offset=0 (i32.add (local.get $cells) (i32.shl (local.get $c) (i32.const 3)))))
            (f64.store (i32.add (i32.load offset=52 (local.get $plan)) (i32.shl (i32.add (local.get $at) (local.get $c)) (i32.const 3)))
              (f64.load offset=64 (i32.add (local.get $cells) (i32.shl (local.get $c) (i32.const 3)))))
            (f64.store (i32.add (i32.load offset=56 (local.get $plan)) (i32.shl (i32.add (local.get $at) (local.get $c)) (i32.const 3)))
              (f64.load offset=128 (i32.add (local.get $cells) (i32.shl (local.get $c) (i32.const 3)))))
            (i32.store (i32.add (i32.load offset=60 (local.get $plan)) (i32.shl (i32.add (local.get $at) (local.get $c)) (i32.const 2))) (local.get $index))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $copy)))
        (local.set $visits (i32.add (local.get $visits) (i32.const 1)))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $path)))
    (i32.store (local.get $plan) (local.get $o))
    (i32.store offset=28 (local.get $plan) (local.get $top))
    (i32.store offset=32 (local.get $plan) (local.get $singularFrom))
    (i32.store offset=36 (local.get $plan) (local.get $similarityAt))
    (i32.store offset=40 (local.get $plan) (local.get $visits))
    (local.get $status))
)
