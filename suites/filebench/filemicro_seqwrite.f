# fsarena built-in: filemicro_seqwrite ($count sequential appends to one file; filebench's defaults).
set $dir=/tmp
set $cached=false
set $count=1024
set $iosize=1m
set $nthreads=1
set $sync=false

define file name=bigfile,path=$dir,size=0,prealloc,cached=$cached

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfile name=write-file,dsync=$sync,filename=bigfile,iosize=$iosize,iters=$count
    flowop finishoncount name=finish,value=1
  }
}
